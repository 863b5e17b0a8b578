import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
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
