import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { MetricsServer } from '../src/metrics/metrics-server.js';
import { createToken, createUser } from './factories/index.js';
import { assetUrl } from './support/html.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const SECRET = 'metrics-scraper-secret-0123456789abcdef';

/** The value of one sample line of a Prometheus text exposition, or undefined. */
function sample(body: string, name: string, labels = ''): number | undefined {
  const line = body.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('metrics, off by default', () => {
  it('should not serve /metrics unless enabled', async () => {
    const t = await createTestApp();
    try {
      expect((await request(t.server).get('/metrics')).status).toBe(404);
      expect(
        (await request(t.server).get('/metrics').set('Authorization', `Bearer ${SECRET}`)).status,
      ).toBe(404);
    } finally {
      await t.close();
    }
  });
});

describe('metrics on the main port, behind their own bearer secret', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ METRICS_ENABLED: 'true', METRICS_TOKEN: SECRET });
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([
    ['no credentials', undefined],
    ['a wrong secret', `Bearer ${SECRET.slice(0, -1)}x`],
    ['the secret without the scheme', SECRET],
  ])('should refuse a scrape with %s', async (_, authorization) => {
    const req = request(t.server).get('/metrics');
    const res = await (authorization ? req.set('Authorization', authorization) : req);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="metrics"');
    expect(res.text).not.toContain('http_request_duration_seconds');
  });

  it('should count requests by route and status, and authentications by outcome', async () => {
    const user = await createUser(t.app);
    const { plaintext } = await createToken(t.app, user);
    const scoped = await createToken(t.app, user, { abilities: ['team:read'] });
    for (let i = 0; i < 3; i++) {
      await request(t.server)
        .get('/api/v1/user/profile')
        .set('Authorization', `Bearer ${plaintext}`);
    }
    await request(t.server).get('/api/v1/user/profile');
    await request(t.server)
      .get('/api/v1/team')
      .set('Authorization', 'Bearer tsr_000000000000000000000000000000000000');
    await request(t.server)
      .get('/api/v1/user/profile')
      .set('Authorization', `Bearer ${scoped.plaintext}`);
    await request(t.server).get('/api/v1/nowhere/42');
    await request(t.server).get(assetUrl((await request(t.server).get('/login')).text, 'app.css'));

    const res = await request(t.server).get('/metrics').set('Authorization', `Bearer ${SECRET}`);

    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const body = res.text;
    const count = (labels: string) => sample(body, 'http_request_duration_seconds_count', labels);
    expect(count('{method="GET",route="/api/v1/user/profile",status="200"}')).toBe(3);
    expect(count('{method="GET",route="/api/v1/user/profile",status="401"}')).toBe(1);
    expect(count('{method="GET",route="/api/v1/user/profile",status="403"}')).toBe(1);
    expect(count('{method="GET",route="/api/v1/team",status="401"}')).toBe(1);
    // A path that matched no route is one series, whatever the path was.
    expect(count('{method="GET",route="(unmatched)",status="404"}')).toBe(1);
    expect(body).not.toContain('/api/v1/nowhere/42');
    // An asset counts under the assets' path, whatever its name.
    expect(count('{method="GET",route="/assets",status="200"}')).toBe(1);
    const outcome = (o: string) =>
      sample(body, 'tessera_api_authentications_total', `{outcome="${o}"}`);
    expect(outcome('success')).toBe(3);
    expect(outcome('missing_token')).toBe(1);
    expect(outcome('invalid_token')).toBe(1);
    expect(outcome('insufficient_scope')).toBe(1);
    // Outcomes not seen yet are there at 0, so alerts on them have a series to watch.
    for (const unseen of [
      'token_revoked',
      'token_expired',
      'account_disabled',
      'ability_not_allowed_by_team',
      'two_factor_required',
      'token_lifetime_exceeds_policy',
      'team_access_lost',
      'rate_limited',
      'error',
    ]) {
      expect([unseen, outcome(unseen)]).toEqual([unseen, 0]);
    }
    // Conflicts run again: a series for each kind from the start (none met here).
    for (const work of ['transaction', 'statement']) {
      expect(sample(body, 'tessera_db_conflict_retries_total', `{work="${work}"}`)).toBe(0);
    }
    expect(sample(body, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(sample(body, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    if (t.config.database.target.type === 'sqlite') {
      expect(body).not.toContain('tessera_db_pool');
    } else {
      expect(sample(body, 'tessera_db_pool_connections_max')).toBe(t.config.database.poolSize);
      const inUse = sample(body, 'tessera_db_pool_connections_in_use')!;
      const idle = sample(body, 'tessera_db_pool_connections_idle')!;
      expect(idle).toBeGreaterThanOrEqual(1);
      // Open connections, busy or idle, never exceed the pool's size.
      expect(inUse + idle).toBeLessThanOrEqual(t.config.database.poolSize);
      expect(sample(body, 'tessera_db_pool_waiting')).toBe(0);
    }
    expect(body).not.toContain(plaintext);
  });
});

describe('metrics on a port of their own, with the request log off', () => {
  let t: TestApp;
  let metricsUrl: string;
  beforeAll(async () => {
    t = await createTestApp({
      METRICS_ENABLED: 'true',
      METRICS_PORT: '0',
      METRICS_HOST: '127.0.0.1',
      // The metrics are told of every response whether or not its line is logged.
      LOG_REQUESTS: 'false',
    });
    metricsUrl = `http://127.0.0.1:${t.app.get(MetricsServer).address()!.port}`;
  });
  afterAll(async () => {
    await t.close();
  });

  it('should serve /metrics there, and not on the public port', async () => {
    await request(t.server).get('/health/live');

    const res = await fetch(`${metricsUrl}/metrics`);
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(
      sample(
        body,
        'http_request_duration_seconds_count',
        '{method="GET",route="/health/live",status="200"}',
      ),
    ).toBe(1);
    expect((await fetch(`${metricsUrl}/`)).status).toBe(404);
    expect((await fetch(`${metricsUrl}/metrics`, { method: 'POST' })).status).toBe(404);
    expect((await request(t.server).get('/metrics')).status).toBe(404);
  });
});
