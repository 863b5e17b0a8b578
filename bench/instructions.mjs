// npm run bench:instructions: instructions per authenticated request, counted by valgrind's
// callgrind, for judging a change of a few per cent where CPU time is too noisy and `perf stat`
// cannot count (on some virtual machines it cannot).
//
//   npm run bench:instructions                               Tessera and the yardstick
//   npm run bench:instructions -- --server tessera --env LOG_REQUESTS=false
//   npm run bench:instructions -- --server peer --server hello --requests 10000
//   npm run bench:instructions -- --server tessera --server compared --compare ../before
//                                 (`compared`: the build of another checkout; `floor`: NestJS)
//
// Each server runs under callgrind with instrumentation off, is warmed up, and is counted over
// `--requests` requests (10 at a time, rotating 1,000 valid tokens); only user-space
// instructions of the node process count (the kernel's TCP work is not included, unlike
// `perf stat`). The same build counted twice differs by up to ±10 %: garbage collections and
// compilations land differently in the window; and the server counted first counts more (10 to
// 17 % in one session), so compare two builds in both orders. Needs valgrind and a MariaDB on
// 127.0.0.1.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import mysql from 'mysql2/promise';
import { recreateMysqlDatabase, seed } from './lib/seed.mjs';
import { PRODUCTION_NODE_ARGS, TESSERA_SCRIPT, tesseraEnv } from './lib/tessera.mjs';

const ROOT = join(import.meta.dirname, '..');
const SERVERS = {
  tessera: { script: TESSERA_SCRIPT, tessera: true },
  yardstick: { script: join(ROOT, 'bench', 'servers', 'yardstick.mjs') },
  peer: { script: join(ROOT, 'bench', 'servers', 'express-passport.mjs') },
  hello: { script: join(ROOT, 'bench', 'servers', 'express-hello.mjs') },
  floor: { script: join(ROOT, 'bench', 'servers', 'nest-floor.mjs') },
};
const { values: opts } = parseArgs({
  options: {
    server: { type: 'string', multiple: true },
    env: { type: 'string', multiple: true, default: [] },
    requests: { type: 'string', default: '5000' },
    warmup: { type: 'string', default: '3000' },
    invalid: { type: 'boolean', default: false },
    compare: { type: 'string' },
  },
});
if (opts.compare) {
  SERVERS.compared = { script: join(opts.compare, 'dist', 'src', 'main.js'), tessera: true };
}
const requests = Number(opts.requests);
const warmup = Number(opts.warmup);
const extraEnv = Object.fromEntries(opts.env.map((pair) => pair.split(/=(.*)/s).slice(0, 2)));
const base = process.env.BENCH_DATABASE_URL ?? 'mariadb://root@127.0.0.1:3306/tessera_bench';
const url = base.replace(/\/[^/]*$/, '/tessera_bench_instructions');

function load(port, count, tokens) {
  const agent = new Agent({ keepAlive: true, maxSockets: 10 });
  let sent = 0;
  let done = 0;
  return new Promise((resolve, reject) => {
    const next = () => {
      if (sent >= count) return;
      const token = tokens[sent++ % tokens.length];
      get(
        {
          host: '127.0.0.1',
          port,
          path: '/api/v1/user/profile',
          agent,
          headers: { authorization: `Bearer ${token}` },
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            if (++done === count) {
              agent.destroy();
              resolve();
            } else next();
          });
        },
      ).on('error', reject);
    };
    for (let i = 0; i < 10; i++) next();
  });
}

/**
 * Waits until the tokens' first uses from this address are recorded (the usage's flush, once a
 * minute): otherwise whichever server is counted first pays for recording them (an insert of each
 * address, an event each) inside its window when its flush lands there, and the servers after it
 * never do.
 */
async function firstUsesRecorded(expected) {
  const u = new URL(url);
  const conn = await mysql.createConnection({
    host: u.hostname,
    port: Number(u.port || 3306),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    database: u.pathname.slice(1),
  });
  try {
    for (let waited = 0; waited < 180_000; waited += 1_000) {
      const [[{ n }]] = await conn.query(
        'SELECT COUNT(DISTINCT token_id) AS n FROM personal_access_token_addresses',
      );
      if (Number(n) >= expected) return;
      await new Promise((r) => setTimeout(r, 1_000));
    }
    console.warn('The first uses were not recorded within 3 minutes: counting anyway');
  } finally {
    await conn.end();
  }
}

async function count(name, port, tokens) {
  const spec = SERVERS[name];
  const dir = mkdtempSync(join(tmpdir(), 'tessera-callgrind-'));
  const env = spec.tessera ? tesseraEnv(url, extraEnv) : { DATABASE_URL: url };
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--instr-atstart=no',
      '--smc-check=all-non-file',
      `--callgrind-out-file=${join(dir, 'callgrind.%p')}`,
      process.execPath,
      ...(spec.tessera ? PRODUCTION_NODE_ARGS : []),
      spec.script,
    ],
    { env: { PATH: process.env.PATH, ...env, PORT: String(port) }, stdio: 'ignore' },
  );
  try {
    for (let waited = 0; ; waited += 500) {
      if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}`);
      try {
        await fetch(`http://127.0.0.1:${port}/api/v1/user/profile`);
        break;
      } catch {
        if (waited > 300_000) throw new Error(`${name} did not start under valgrind`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    await load(port, warmup, tokens);
    if (spec.tessera && !opts.invalid) await firstUsesRecorded(Math.min(tokens.length, warmup));
    execFileSync('callgrind_control', ['-i', 'on', String(child.pid)], { stdio: 'ignore' });
    await load(port, requests, tokens);
    execFileSync('callgrind_control', ['-i', 'off', String(child.pid)], { stdio: 'ignore' });
    execFileSync('callgrind_control', ['-d', String(child.pid)], { stdio: 'ignore' });
    const dump = readFileSync(join(dir, `callgrind.${child.pid}.1`), 'utf8');
    return Number(/^totals:\s+(\d+)/m.exec(dump)[1]) / requests;
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  const names = opts.server ?? ['tessera', 'yardstick'];
  for (const name of names) if (!SERVERS[name]) throw new Error(`unknown server ${name}`);
  console.log(`Seeding ${url}: 10000 users, 100000 tokens`);
  await recreateMysqlDatabase(url);
  const seeded = await seed(url, { users: 10_000, tokens: 100_000 });
  const tokens = opts.invalid ? [seeded.invalid] : seeded.valid;
  let port = 4700;
  for (const name of names) {
    const perRequest = await count(name, port++, tokens);
    const env = SERVERS[name].tessera && opts.env.length ? ` (${opts.env.join(' ')})` : '';
    console.log(
      `${name}${env}: ${(perRequest / 1000).toFixed(0)}k instructions per ${opts.invalid ? 'invalid-token' : 'authenticated'} request`,
    );
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
