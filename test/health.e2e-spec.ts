import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { LogCapture } from './support/log-capture.js';
import { createTestApp, type TestApp } from './support/test-app.js';

describe('health', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_API_ANONYMOUS_PER_IP: '1' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('should say the process is live and the database ready, without authentication', async () => {
    const live = await request(t.server).get('/health/live');
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ status: 'ok' });
    const ready = await request(t.server).get('/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ok', info: { database: { status: 'up' } } });
  });

  it('should not be rate limited', async () => {
    await request(t.server).get('/api/v1/user/profile');
    await request(t.server).get('/api/v1/user/profile');
    expect((await request(t.server).get('/api/v1/user/profile')).status).toBe(429);
    for (let i = 0; i < 5; i++) {
      expect((await request(t.server).get('/health/ready')).status).toBe(200);
    }
  });
});

describe('health with DB_MIGRATE=false and migrations pending', () => {
  let t: TestApp;
  const log = new LogCapture();

  beforeAll(async () => {
    t = await createTestApp({ DB_MIGRATE: 'false', LOG_LEVEL: 'warn' }, { logs: log });
  });
  afterAll(async () => {
    await t.close();
  });

  it('should say so at start, answer 503 naming them, and recover once they are applied', async () => {
    const names = t.dataSource.migrations.map((m) => m.name);
    expect(names.length).toBeGreaterThan(1);
    expect(log.text).toContain(`DB_MIGRATE=false and ${names.length} migration(s) pending`);
    expect(log.text).toContain(names[0]);

    const ready = await request(t.server).get('/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.body.error.migrations).toEqual({ status: 'down', pending: names });
    expect((await request(t.server).get('/health/live')).status).toBe(200);

    const api = await request(t.server).get('/api/v1/user/profile');
    expect(api.status).toBe(503);
    expect(api.headers['retry-after']).toBe('5');
    expect(api.body.error.code).toBe('service_unavailable');
    const page = await request(t.server).get('/login');
    expect(page.status).toBe(503);
    expect(page.text).not.toMatch(/no such table|doesn't exist|QueryFailedError/);

    await t.dataSource.runMigrations();
    expect((await request(t.server).get('/health/ready')).status).toBe(200);
    expect((await request(t.server).get('/api/v1/user/profile')).status).toBe(401);
    expect((await request(t.server).get('/login')).status).toBe(200);
  });
});
