import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { PRODUCTION_NODE_FLAGS, ROOT, startBuiltServer } from './support/run-built.js';

/**
 * What the image promises, checked without a container engine: the production stage has every
 * package the built app imports, runs as a non-root user, its HEALTHCHECK command tells a live
 * server from a dead one, and its CMD starts the server and stops it cleanly on SIGTERM.
 */
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n\s*/g, '');
const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
const packageJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  engines: { node: string };
  scripts: Record<string, string>;
};

/** The exec-form command of CMD, or of HEALTHCHECK's CMD, in the final stage. */
function execForm(instruction: 'CMD' | 'HEALTHCHECK'): string[] {
  const pattern = instruction === 'CMD' ? /^CMD (\[.*\])$/m : /^HEALTHCHECK .*?CMD (\[.*\])$/m;
  const match = pattern.exec(finalStage);
  if (!match) throw new Error(`no exec-form ${instruction} in the final stage`);
  return JSON.parse(match[1]) as string[];
}

function run(command: string[], env: Record<string, string>): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(command[0] === 'node' ? process.execPath : command[0], command.slice(1), {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: 'ignore',
    });
    child.on('close', resolve);
  });
}

function jsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? jsFiles(join(dir, e.name))
      : e.name.endsWith('.js')
        ? [join(dir, e.name)]
        : [],
  );
}

describe('the container image', () => {
  it('should ship every package the built app imports as a production dependency', () => {
    const builtin = new Set(builtinModules);
    const imported = new Set<string>();
    for (const file of jsFiles(join(ROOT, 'dist', 'src'))) {
      const source = readFileSync(file, 'utf8');
      for (const [, spec] of source.matchAll(/(?:from|import\()\s*['"]([^'".][^'"]*)['"]/g)) {
        if (spec.startsWith('node:') || builtin.has(spec)) continue;
        const parts = spec.split('/');
        imported.add(spec.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]);
      }
    }
    expect(imported.size).toBeGreaterThan(10);
    const missing = [...imported].filter((name) => !(name in packageJson.dependencies));
    expect(missing).toEqual([]);
  });

  it('should build and run on the Node.js major version the package declares', () => {
    const major = /^>=(\d+)/.exec(packageJson.engines.node)?.[1];
    expect(major).toBe('24');
    const bases = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    expect(bases).toEqual([`node:${major}-bookworm-slim`, `node:${major}-bookworm-slim`]);
  });

  it('should build in a stage of its own and run as a non-root user', () => {
    expect(dockerfile.match(/^FROM /gm)).toHaveLength(2);
    expect(finalStage).toMatch(/^USER node$/m);
    expect(finalStage).not.toMatch(/g\+\+|npm install/);
    expect(finalStage).toMatch(/^COPY --from=build \/app\/node_modules/m);
    expect(dockerfile).toMatch(/npm prune --omit=dev/);
  });

  it('should run node with the node flags and allocator setting of npm run start:prod', () => {
    const startProd = packageJson.scripts['start:prod'].split(/\s+/);
    expect(PRODUCTION_NODE_FLAGS).toContain('--max-semi-space-size=16');
    expect(PRODUCTION_NODE_FLAGS).toContain('--no-allocation-site-pretenuring');
    expect(execForm('CMD').slice(1, -1)).toEqual(PRODUCTION_NODE_FLAGS);
    for (const setting of startProd.filter((word) => /^[A-Z_]+=/.test(word))) {
      expect(finalStage).toContain(setting);
    }
    expect(startProd).toContain('MALLOC_MMAP_THRESHOLD_=131072');
  });

  it('should start with node as PID 1 and stop with exit 0 on SIGTERM', async () => {
    const cmd = execForm('CMD');
    expect(cmd[0]).toBe('node');
    expect(cmd.at(-1)).toBe('dist/src/main.js');

    const server = await startBuiltServer({
      NODE_ENV: 'production',
      SESSION_SECRET: 'container-test-secret-container-test-secret',
      DATABASE_URL: 'sqlite::memory:',
      LOG_FORMAT: 'json',
      EMAIL_VERIFICATION: 'off',
    });
    const port = new URL(server.url).port;
    const healthcheck = execForm('HEALTHCHECK');
    try {
      // The image's own health check, against a live server and against nothing.
      expect(await run(healthcheck, { PORT: port })).toBe(0);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    expect(await run(healthcheck, { PORT: port })).toBe(1);
  });
});

/** A published port of docker-compose.yml as Compose reads it: short or long syntax. */
type PortEntry = string | number | { host_ip?: string; published?: string | number };

/** `${NAME:-default}` as Compose substitutes it when NAME is not set. */
const unset = (text: string): string => text.replace(/\$\{\w+:-([^}]*)\}/g, '$1');

/** The address a published port listens on; all interfaces when it names none. */
function hostAddress(entry: PortEntry): string {
  if (typeof entry === 'object') return entry.host_ip ?? '0.0.0.0';
  const parts = unset(String(entry)).split(':');
  return parts.length === 3 ? parts[0] : '0.0.0.0';
}

describe('docker-compose.yml and its proxy', () => {
  const compose = load(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as {
    services: Record<string, { ports?: PortEntry[] }>;
  };
  const proxyConf = readFileSync(join(ROOT, 'docker', 'proxy.conf'), 'utf8');

  it('should publish ports on this machine only unless told otherwise, and the trial inbox always', () => {
    const published = Object.entries(compose.services).flatMap(([service, { ports = [] }]) =>
      ports.map((entry) => ({ service, entry, address: hostAddress(entry) })),
    );
    // The proxy (the way in) and Mailpit's inbox (every reset and invitation link it caught).
    expect(published.map((p) => p.service).sort()).toEqual(['mailpit', 'proxy']);
    for (const { address } of published) expect(address).toBe('127.0.0.1');
    // The inbox has no setting that would publish it further.
    expect(compose.services.mailpit.ports).toEqual(['127.0.0.1:8025:8025']);
  });

  it('should not tell clients which instance answered, nor its internal address', () => {
    const headers = [...proxyConf.matchAll(/^\s*add_header\s+(\S+)\s+([^;]*);/gm)];
    expect(headers.filter(([, name]) => /served-by/i.test(name))).toEqual([]);
    expect(headers.filter(([, , value]) => value.includes('$upstream'))).toEqual([]);
    // The operator still sees it, in the proxy's log.
    expect(proxyConf).toMatch(/log_format\s+\w+[^;]*\$upstream_addr/);
  });
});
