import { spawn, type ChildProcess } from 'node:child_process';
import { createConnection, createServer, type AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';

// Jest loads this file outside the specs' module mapping: it imports node's modules only, and
// repeats two names of ./redis.ts.
const DEFAULT_TEST_REDIS_URL = 'redis://127.0.0.1:6379';
const REDIS_MISSING = 'TEST_REDIS_MISSING';

/** What globalSetup hands to globalTeardown: the redis-server it started, if any. */
const STARTED = Symbol.for('tessera.test.redis-server');

type WithServer = typeof globalThis & { [STARTED]?: ChildProcess };

/** Whether a Redis answers PING at `url` (refused or silent for ten seconds: no). */
function answers(url: URL): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(Number(url.port || 6379), url.hostname);
    let reply = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(10_000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** Starts `redis-server` on a free port of 127.0.0.1, keeping nothing on disk; null without one. */
async function startOwn(): Promise<{ child: ChildProcess; url: string } | null> {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const started = await new Promise<boolean>((resolve) => {
    child.once('error', () => resolve(false)); // ENOENT: not installed
    child.once('spawn', () => resolve(true));
  });
  if (!started) return null;
  const url = `redis://127.0.0.1:${port}`;
  let exited = false;
  child.once('exit', () => (exited = true));
  // A guard against a hang, not a measure of speed: it answers within milliseconds.
  for (let tries = 0; !exited && !(await answers(new URL(url))); tries++) {
    if (tries === 3000) throw new Error(`redis-server on port ${port} did not answer`);
    await delay(20);
  }
  if (exited) return null;
  // The run does not wait on it; globalTeardown stops it.
  child.unref();
  return { child, url };
}

/**
 * The specs that share limits (rate-limits, limits-under-burst, redis-outage, the Redis storage's)
 * need a Redis. TEST_REDIS_URL names one; else the machine's on 127.0.0.1:6379 is used when it
 * answers, and otherwise a redis-server of the run's own, when one is installed. With none of
 * these, those specs fail with one line saying so, and the others run.
 */
export default async function redisForTheSpecs(): Promise<void> {
  const named = process.env.TEST_REDIS_URL;
  if (named) {
    if (!(await answers(new URL(named)))) {
      missing(`The specs that share limits need Redis: none answers at TEST_REDIS_URL=${named}.`);
    }
    return;
  }
  if (await answers(new URL(DEFAULT_TEST_REDIS_URL))) return;
  const own = await startOwn();
  if (own) {
    process.env.TEST_REDIS_URL = own.url;
    (globalThis as WithServer)[STARTED] = own.child;
    return;
  }
  missing(
    'The specs that share limits need Redis: none answers on 127.0.0.1:6379 and no redis-server is installed to start one (apt-get install redis-server, or set TEST_REDIS_URL).',
  );
}

/** Said once at the start, and again by each spec that needs Redis as it fails. */
function missing(line: string): void {
  process.env[REDIS_MISSING] = line;
  process.stderr.write(`\n${line}\n`);
}
