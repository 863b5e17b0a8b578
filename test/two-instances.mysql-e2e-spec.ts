import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { uniqueEmail } from './factories/index.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';
import { WebClient } from './support/web-client.js';

/** Two instances on one MySQL/MariaDB database (runs with TEST_DATABASE_URL). */
describe('two instances', () => {
  let db: TestDatabase;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    const env = { SESSION_SECRET: 'one secret shared by every instance of this deployment' };
    a = await createTestApp(env, { database: db });
    b = await createTestApp(env, { database: db });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
  });

  it('should refuse on B a token revoked through A, on the very next request', async () => {
    const client = new WebClient(a.server);
    await client.register('Two Places', uniqueEmail('two'));
    const page = await client.submit('/settings/api-tokens', '/settings/api-tokens', {
      name: 'shared',
      abilities: 'user:read',
    });
    const token = /value="(tsr_[0-9A-Za-z]{36})"/.exec(page.text)![1];
    const id = /data-token-id="(\d+)"/.exec(page.text)![1];
    const onB = () =>
      request(b.server).get('/api/v1/user/profile').set('Authorization', `Bearer ${token}`);
    expect((await onB()).status).toBe(200);

    await client.submit('/settings/api-tokens', `/settings/api-tokens/${id}/revoke`);

    const next = await onB();
    expect(next.status).toBe(401);
    expect(next.body.error.code).toBe('token_revoked');
  });

  it('should end on B a session signed out on A', async () => {
    const client = new WebClient(a.server);
    const registered = await client.register('Signed Out', uniqueEmail('out'));
    const cookie = client.sessionCookie(registered)!;
    expect((await request(b.server).get('/dashboard').set('Cookie', cookie)).status).toBe(200);

    await client.submit('/dashboard', '/logout');

    const after = await request(b.server).get('/dashboard').set('Cookie', cookie);
    expect(after.status).toBe(303);
    expect(after.headers.location).toBe('/login');
  });
});
