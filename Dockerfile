# syntax=docker/dockerfile:1
# Build: the TypeScript, then keep production dependencies only. The native modules
# (better-sqlite3, argon2) are Node-API builds shipped in their packages: nothing to compile.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ormconfig.ts ./
COPY src ./src
RUN npx nest build && npm prune --omit=dev

# Run: no compilers, no dev dependencies, not root.
FROM node:24-bookworm-slim
# glibc returns argon2's 19 MiB blocks to the system when freed, instead of keeping them in its
# arenas (MALLOC_MMAP_THRESHOLD_ fixed: docs/PERFORMANCE.md); the same as npm run start:prod.
ENV NODE_ENV=production \
    MALLOC_MMAP_THRESHOLD_=131072 \
    PORT=3000 \
    DATABASE_URL=sqlite:/app/data/tessera.sqlite
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY views ./views
COPY public ./public
# The embedded database, when DATABASE_URL is left at SQLite, lives in a volume the app can write.
RUN mkdir -p /app/data && chown node:node /app/data
VOLUME ["/app/data"]
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health/live').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Exec form: node is PID 1 and receives SIGTERM itself (no shell or npm in between), finishes the
# requests in flight and exits 0.
CMD ["node", "--max-old-space-size=128", "--max-semi-space-size=16", "--no-allocation-site-pretenuring", "dist/src/main.js"]
