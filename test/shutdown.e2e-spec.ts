import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request as httpRequest } from 'node:http';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { spawnBuiltServer, startBuiltServer } from './support/run-built.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';
import { sleep, waitFor } from './support/wait-for.js';

/**
 * Starts a form POST but holds back half of its body, so it is in flight until `finish` sends
 * the rest; resolves with the status the server answers.
 */
function slowPost(base: string): { finish: () => void; status: Promise<number> } {
  const body = 'email=nobody%40example.com&password=not-a-real-password';
  let finish = () => {};
  const status = new Promise<number>((resolve, reject) => {
    const req = httpRequest(
      `${base}/login`,
      {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          'Content-Length': body.length,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      },
    );
    req.on('error', reject);
    req.write(body.slice(0, 10));
    finish = () => req.end(body.slice(10));
  });
  return { finish, status };
}

describe('graceful shutdown', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase({ file: true });
  });
  afterAll(async () => {
    await db.drop();
  });

  it('should finish requests in flight, refuse new connections, and exit 0 on SIGTERM', async () => {
    const server = await startBuiltServer({ DATABASE_URL: db.url, SHUTDOWN_TIMEOUT_MS: '10000' });
    const inFlight = Array.from({ length: 5 }, () => slowPost(server.url));
    await sleep(200);

    const exited = server.stop();
    await sleep(300);
    await expect(fetch(`${server.url}/health/live`)).rejects.toThrow();
    for (const request of inFlight) request.finish();

    // Each held-back request got its whole answer (a 403: it carries no CSRF token).
    expect(await Promise.all(inFlight.map((r) => r.status))).toEqual([403, 403, 403, 403, 403]);
    expect(await exited).toBe(0);
    expect(server.output()).toMatch(/SIGTERM received/);
  });

  it('should write every access line, buffered, while it runs and when it stops, each line whole', async () => {
    const server = await startBuiltServer({ DATABASE_URL: db.url, LOG_FORMAT: 'json' });
    const completed = () =>
      server
        .output()
        .split('\n')
        .filter((line) => line.includes('"request completed"'));
    const ids = (from: number, count: number) =>
      Array.from({ length: count }, (_, i) => `access-${from + i}`);
    const send = (id: string, i: number) =>
      fetch(`${server.url}${i % 2 ? '/health/live' : '/api/v1/user/profile'}`, {
        headers: { 'X-Request-Id': id },
      }).then((res) => res.arrayBuffer());

    // A few requests: too few lines to fill the buffer, written by the flush that follows.
    await Promise.all(ids(0, 3).map(send));
    await waitFor(() => completed().length >= 3);
    // Many at once, then a stop: what is still buffered is written before the process exits.
    await Promise.all(ids(3, 300).map(send));
    expect(await server.stop()).toBe(0);

    const lines = server.output().trim().split('\n');
    const parsed = lines.map((line) => JSON.parse(line) as { reqId?: string; msg: string });
    const logged = parsed.filter((l) => l.msg === 'request completed').map((l) => l.reqId);
    expect(logged.sort()).toEqual(ids(0, 303).sort());
  });

  it('should stop at once on SIGTERM while still starting, before it listens', async () => {
    // A "database" that takes connections and never answers: the server is starting for as long
    // as the test wants, and its first connection shows that start-up is under way.
    let connected = () => {};
    const reached = new Promise<void>((resolve) => (connected = resolve));
    const sockets: Socket[] = [];
    const silent = createServer((socket) => {
      sockets.push(socket.on('error', () => {}));
      connected();
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    // Its connect timeout is ten minutes: had the signal waited for start-up to give up, the
    // test would outlast Jest's own timeout rather than pass.
    const child = spawnBuiltServer({
      DATABASE_URL: `mysql://root@127.0.0.1:${port}/nothing`,
      DB_QUERY_TIMEOUT_MS: '600000',
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    await reached;

    child.kill('SIGTERM');

    try {
      expect(await exited).toBe(1);
      expect(stderr).toMatch(/SIGTERM received while starting/);
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });
});
