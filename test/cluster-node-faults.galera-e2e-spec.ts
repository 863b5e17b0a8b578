import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { createToken } from './factories/index.js';
import {
  createClusterDatabase,
  galeraNodes,
  waitForCluster,
  type ClusterDatabase,
  type GaleraNode,
} from './support/galera.js';
import { signedInPerson } from './support/people.js';
import { TestSmtpServer } from './support/smtp-server.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { waitFor } from './support/wait-for.js';

/**
 * Instances on nodes that lose the cluster, or whose cluster stalls: they answer 503 (never
 * 500, never a hang), say so to the readiness probe, and serve again by themselves once the
 * node is back. A node is cut off by Galera's own switch (gmcast.isolate), as a network
 * partition would: nothing outside 127.0.0.1 is touched. Runs only with TEST_GALERA_URLS.
 */
describe('cluster node faults', () => {
  let db: ClusterDatabase;
  let smtp: TestSmtpServer;
  let nodes: GaleraNode[];
  const apps: TestApp[] = [];

  beforeAll(async () => {
    nodes = galeraNodes();
    await waitForCluster(nodes);
    db = await createClusterDatabase();
    smtp = await TestSmtpServer.start();
  });
  afterEach(async () => {
    // Whatever a test left cut off or slowed comes back before the next one.
    for (const node of nodes) await node.rejoin().catch(() => undefined);
    for (const node of nodes) await node.setProviderOption('evs.suspect_timeout=PT5S');
    await waitForCluster(nodes);
    for (const app of apps.splice(0)) await app.close();
  });
  afterAll(async () => {
    await smtp?.stop();
    await db?.drop();
  });

  /** An instance on node `n` (0-based), with the query timeout a deployment would have. */
  async function instanceOn(n: number, queryTimeoutMs: number): Promise<TestApp> {
    const app = await createTestApp(
      { RATE_LIMIT_ENABLED: 'false', DB_QUERY_TIMEOUT_MS: String(queryTimeoutMs) },
      { database: db.onNode[n], mail: smtp },
    );
    apps.push(app);
    return app;
  }

  it('should answer 503 with Retry-After and fail readiness on an instance whose node is cut off, and serve again once it rejoins', async () => {
    const cut = nodes[2];
    const t = await instanceOn(2, 3000);
    const person = await signedInPerson(t, { name: 'Cut Off' });
    const token = (await createToken(t.app, person.user)).plaintext;
    const profile = () =>
      request(t.server).get('/api/v1/user/profile').set('Authorization', `Bearer ${token}`);
    expect((await profile()).status).toBe(200);
    expect((await person.client.get('/dashboard')).status).toBe(200);
    expect((await request(t.server).get('/health/ready')).status).toBe(200);

    await cut.isolate();
    await waitFor(async () => (await cut.status()).wsrep_cluster_status === 'non-Primary', {
      intervalMs: 250,
    });
    // The others carry on without it.
    await waitFor(() => nodes[0].synced(2), { intervalMs: 250 });

    const api = await profile();
    expect(api.status).toBe(503);
    expect(api.headers['retry-after']).toBe('5');
    expect(api.body).toMatchObject({ success: false, error: { code: 'service_unavailable' } });
    const page = await person.client.get('/dashboard');
    expect(page.status).toBe(503);
    expect(page.text).toContain('Tessera is not available right now');
    const ready = await request(t.server).get('/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.body.error.cluster).toMatchObject({ status: 'down', kind: 'galera' });
    expect(JSON.stringify(ready.body)).not.toMatch(/WSREP|ER_|SELECT/);
    expect((await request(t.server).get('/health/live')).status).toBe(200);

    await cut.rejoin();
    await waitForCluster(nodes);
    await waitFor(async () => (await profile()).status === 200, { intervalMs: 250 });
    expect((await person.client.get('/dashboard')).status).toBe(200);
    const back = await request(t.server).get('/health/ready');
    expect(back.status).toBe(200);
    expect(back.body.info.cluster).toMatchObject({
      status: 'up',
      wsrep_local_state_comment: 'Synced',
    });
  });

  it('should answer a write on a surviving node within its query timeout while the cluster waits on a node that stopped answering, and serve again after', async () => {
    // The survivors wait this long before they give the silent node up, and their commits wait
    // with them: far longer than the instance's query timeout.
    for (const node of nodes) await node.setProviderOption('evs.suspect_timeout=PT12S');
    const t = await instanceOn(0, 1500);
    const person = await signedInPerson(t, { name: 'Stalled Writer' });
    const csrf = await person.client.csrfFrom('/settings/api-tokens');
    const create = (name: string) =>
      person.client.post('/settings/api-tokens', csrf, { name, abilities: 'user:read' });
    expect((await create('before')).status).toBe(200);

    await nodes[2].isolate();
    const answer = await create('during');
    // Answered while the survivors still counted the silent node: within the stall, not after.
    const sizeWhenAnswered = (await nodes[0].status()).wsrep_cluster_size;
    expect(answer.status).toBe(503);
    expect(sizeWhenAnswered).toBe('3');

    await nodes[2].rejoin();
    await waitForCluster(nodes);
    await waitFor(async () => (await create('after')).status === 200, { intervalMs: 250 });
  });
});
