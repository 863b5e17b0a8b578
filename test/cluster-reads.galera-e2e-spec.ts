import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { uniqueEmail } from './factories/index.js';
import { createClusterDatabase, startWriteLoad, type ClusterDatabase } from './support/galera.js';
import { signedInPerson, PASSWORD } from './support/people.js';
import { TestSmtpServer } from './support/smtp-server.js';
import { SHARED_SECRET } from './support/instances.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { waitFor } from './support/wait-for.js';
import { WebClient } from './support/web-client.js';
import { createUser } from './factories/index.js';

/** How many times each change is made on one node and looked for on another. */
const TRIES = 40;

/**
 * Instance A on the cluster's first node, instance B on its second, while every node keeps
 * writing: what A has answered as done, B sees on the very next request. A Galera node answers
 * a read from what it has applied so far unless the connection asks it to wait for the cluster
 * (wsrep_sync_wait). Runs only with TEST_GALERA_URLS (see jest.config.js).
 */
describe('reads on a cluster see every write that was answered', () => {
  let db: ClusterDatabase;
  let smtp: TestSmtpServer;
  let a: TestApp;
  let b: TestApp;
  let load: Awaited<ReturnType<typeof startWriteLoad>>;

  beforeAll(async () => {
    db = await createClusterDatabase();
    smtp = await TestSmtpServer.start();
    const env = { SESSION_SECRET: SHARED_SECRET, RATE_LIMIT_ENABLED: 'false' };
    a = await createTestApp(env, { database: db.onNode[0], mail: smtp });
    b = await createTestApp(env, { database: db.onNode[1], mail: smtp });
    load = await startWriteLoad(db);
  });
  afterAll(async () => {
    await load?.stop();
    await a?.close();
    await b?.close();
    await smtp?.stop();
    await db?.drop();
  });

  const profileOnB = (token: string) =>
    request(b.server).get('/api/v1/user/profile').set('Authorization', `Bearer ${token}`);

  it(`should refuse on node B every token revoked on node A, on the next request (${TRIES} revocations under a write load)`, async () => {
    const person = await signedInPerson(a, { name: 'Revoking Person' });
    const acceptedAfterRevocation: number[] = [];
    const before = load.written();
    for (let i = 0; i < TRIES; i++) {
      const { value, id } = await person.client.createTokenOnPage({
        name: `revoked ${i}`,
        abilities: 'user:read',
      });
      // Working on B first (how soon is the next test's business).
      await waitFor(async () => (await profileOnB(value)).status === 200);

      const revoked = await person.client.submit(
        '/settings/api-tokens',
        `/settings/api-tokens/${id}/revoke`,
      );
      expect(revoked.status).toBe(303);

      const next = await profileOnB(value);
      if (next.status !== 401 || next.body.error?.code !== 'token_revoked') {
        acceptedAfterRevocation.push(i);
      }
    }
    expect(acceptedAfterRevocation).toEqual([]);
    // The nodes were writing all along.
    expect(load.written()).toBeGreaterThan(before);
  });

  it(`should accept on node B a token created on node A, on the first request (${TRIES} tokens)`, async () => {
    const person = await signedInPerson(a, { name: 'Creating Person' });
    const refused: string[] = [];
    for (let i = 0; i < TRIES; i++) {
      const { value } = await person.client.createTokenOnPage({
        name: `new ${i}`,
        abilities: 'user:read',
      });
      const first = await profileOnB(value);
      if (first.status !== 200) refused.push(`${i}: ${first.status} ${first.body.error?.code}`);
    }
    expect(refused).toEqual([]);
  });

  it(`should know on node B a session signed in on node A, and end it there once signed out on A (${TRIES} sessions)`, async () => {
    const email = uniqueEmail('cluster-session');
    await createUser(a.app, { name: 'Signing Person', email, password: PASSWORD });
    const unknownAfterSignIn: number[] = [];
    const keptAfterSignOut: number[] = [];
    for (let i = 0; i < TRIES; i++) {
      const client = new WebClient(a.server, smtp);
      const signedIn = await client.login(email);
      expect(signedIn.headers.location).toBe('/dashboard');
      const cookie = client.sessionCookie(signedIn)!;
      const dashboardOnB = () => request(b.server).get('/dashboard').set('Cookie', cookie);

      if ((await dashboardOnB()).status !== 200) unknownAfterSignIn.push(i);
      await waitFor(async () => (await dashboardOnB()).status === 200);

      const out = await client.submit('/dashboard', '/logout');
      expect(out.status).toBe(303);
      const after = await dashboardOnB();
      if (after.status !== 303 || after.headers.location !== '/login?session_ended=1')
        keptAfterSignOut.push(i);
    }
    expect({ unknownAfterSignIn, keptAfterSignOut }).toEqual({
      unknownAfterSignIn: [],
      keptAfterSignOut: [],
    });
  });
});
