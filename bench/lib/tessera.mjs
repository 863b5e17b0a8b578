// How the benchmarks run Tessera: the built server, its production node flags, and the
// configuration of a deployment with rate limits whose ceiling is above what the load reaches.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

export const TESSERA_SCRIPT = join(ROOT, 'dist', 'src', 'main.js');

const START_PROD = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts[
  'start:prod'
].split(/\s+/);

/** The node flags of `npm run start:prod`. */
export const PRODUCTION_NODE_ARGS = START_PROD.filter((arg) => arg.startsWith('--'));

/** The environment `npm run start:prod` sets before node (the allocator's setting). */
export const PRODUCTION_PROCESS_ENV = Object.fromEntries(
  START_PROD.filter((word) => /^[A-Z_][A-Z0-9_]*=/.test(word)).map((word) =>
    word.split(/=(.*)/s).slice(0, 2),
  ),
);

/** Loaded into every benchmarked server: event-loop delay and the idle heap (probe.mjs). */
export const PROBE_NODE_ARGS = [
  '--expose-gc',
  '--import',
  new URL('./probe.mjs', import.meta.url).href,
];

export const tesseraEnv = (url, extra = {}) => ({
  ...PRODUCTION_PROCESS_ENV,
  NODE_ENV: 'production',
  SESSION_SECRET: 'benchmark-session-secret-benchmark-session-secret',
  LOG_LEVEL: 'log',
  DATABASE_URL: url,
  DB_POOL_SIZE: '10',
  // The benchmarks send no mail.
  EMAIL_VERIFICATION: 'off',
  // Limits on, with a ceiling above what the load can reach.
  RATE_LIMIT_API_PER_TOKEN: '10000000',
  RATE_LIMIT_API_ANONYMOUS_PER_IP: '10000000',
  ...extra,
});
