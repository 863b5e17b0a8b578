import type { ChildProcess } from 'node:child_process';

/** Where the global set-up left the redis-server it started. */
const STARTED = Symbol.for('tessera.test.redis-server');

/** Stops the redis-server the global set-up started, if it started one. */
export default async function stopOwnRedis(): Promise<void> {
  const holder = globalThis as typeof globalThis & { [STARTED]?: ChildProcess };
  const child = holder[STARTED];
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
  delete holder[STARTED];
}
