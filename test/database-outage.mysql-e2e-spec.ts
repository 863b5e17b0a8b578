import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { createToken, createUser } from './factories/index.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';

/**
 * An unreachable database is a network condition, so the app reaches its database server
 * through a TCP proxy the test can cut. Runs only with TEST_DATABASE_URL (see jest.config.js):
 * embedded SQLite has no connection to lose.
 */
describe('database outage', () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    const url = new URL(db.url);
    proxy = await new TcpProxy(url.hostname, Number(url.port || 3306)).start();
    url.host = `127.0.0.1:${proxy.port}`;
    t = await createTestApp({}, { ...db, url: url.toString() });
    token = (await createToken(t.app, await createUser(t.app))).plaintext;
  });

  afterAll(async () => {
    await t.close();
    await proxy.stop();
    await db.drop();
  });

  const profile = () =>
    request(t.server).get('/api/v1/user/profile').set('Authorization', `Bearer ${token}`);

  it('should answer 503 service_unavailable while the database is cut off, and recover without a restart', async () => {
    expect((await profile()).status).toBe(200);

    await proxy.cut();
    const down = await profile();
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({ success: false, error: { code: 'service_unavailable' } });
    expect(JSON.stringify(down.body)).not.toMatch(/ECONN|127\.0\.0\.1|SELECT/);

    await proxy.restore();
    expect((await profile()).status).toBe(200);
  });
});
