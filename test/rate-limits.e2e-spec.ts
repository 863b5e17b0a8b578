import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { LOOKUPS_PER_FAILURE_LIMIT } from '../src/api/v1/api-authentication.js';
import { ManualClock } from '../src/clock/clock.js';
import { generateToken } from '../src/tokens/token-format.js';
import { createToken, createUser, uniqueEmail } from './factories/index.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import type { TestDatabase } from './support/test-database.js';
import { createTestDatabase } from './support/test-database.js';
import { WebClient } from './support/web-client.js';
import { testRedisUrl } from './support/redis.js';

const LIMITS = {
  RATE_LIMIT_API_PER_TOKEN: '5',
  RATE_LIMIT_API_ANONYMOUS_PER_IP: '3',
  RATE_LIMIT_SIGN_IN: '3',
};

function expectRateLimited(res: request.Response): void {
  expect(res.status).toBe(429);
  expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
}

describe('rate limits', () => {
  describe('in process', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await createTestApp(LIMITS);
    });
    afterAll(async () => {
      await t.close();
    });

    const profile = (token?: string, ip?: string) => {
      const req = request(t.server).get('/api/v1/user/profile');
      if (ip) req.set('X-Forwarded-For', ip);
      return token ? req.set('Authorization', `Bearer ${token}`) : req;
    };

    it('should give each token its own budget and report it on every answer', async () => {
      const user = await createUser(t.app);
      const a = (await createToken(t.app, user)).plaintext;
      const b = (await createToken(t.app, user)).plaintext;
      for (let i = 1; i <= 5; i++) {
        const res = await profile(a);
        expect(res.status).toBe(200);
        expect(res.headers['ratelimit-limit']).toBe('5');
        expect(res.headers['ratelimit-remaining']).toBe(String(5 - i));
        expect(Number(res.headers['ratelimit-reset'])).toBeGreaterThan(0);
      }
      const over = await profile(a);
      expectRateLimited(over);
      expect(over.body).toMatchObject({
        success: false,
        error: { code: 'rate_limited' },
        version: 'v1',
      });
      expect((await profile(b)).status).toBe(200);
    });

    it('should count failed attempts per client IP and answer its further bad tokens 429, while a valid token from it is served on its own budget', async () => {
      const fresh = await createTestApp(LIMITS);
      try {
        const { plaintext } = await createToken(fresh.app, await createUser(fresh.app));
        const get = (auth?: string) => {
          const req = request(fresh.server).get('/api/v1/team');
          return auth ? req.set('Authorization', auth) : req;
        };
        expect((await get()).status).toBe(401);
        expect((await get('Bearer tsr_guess')).status).toBe(401);
        const third = await get(
          `Bearer ${plaintext.slice(0, -1)}${plaintext.endsWith('x') ? 'y' : 'x'}`,
        );
        expect(third.status).toBe(401);
        expect(third.headers['ratelimit-remaining']).toBe('0');
        expectRateLimited(await get(`Bearer ${generateToken().plaintext}`));

        // A neighbour behind the same address, with a valid token: its own budget, not theirs.
        for (let i = 1; i <= 5; i++) {
          const valid = await get(`Bearer ${plaintext}`);
          expect(valid.status).toBe(200);
          expect(valid.headers['ratelimit-limit']).toBe('5');
          expect(valid.headers['ratelimit-remaining']).toBe(String(5 - i));
        }
        expectRateLimited(await get(`Bearer ${plaintext}`));
        expectRateLimited(await get('Bearer tsr_another_guess'));
      } finally {
        await fresh.close();
      }
    });

    it(`should look nothing up from an address past ${LOOKUPS_PER_FAILURE_LIMIT} times its failure limit, a valid token included, until the window ends`, async () => {
      const clock = new ManualClock();
      const fresh = await createTestApp(LIMITS, { clock });
      try {
        const { plaintext } = await createToken(fresh.app, await createUser(fresh.app));
        const get = (token: string) =>
          request(fresh.server).get('/api/v1/team').set('Authorization', `Bearer ${token}`);
        const statuses: number[] = [];
        for (let i = 0; i < 3 * LOOKUPS_PER_FAILURE_LIMIT; i++) {
          statuses.push((await get(generateToken().plaintext)).status);
        }
        expect(statuses).toEqual([401, 401, 401, ...Array(27).fill(429)]);

        fresh.queries.clear();
        expectRateLimited(await get(generateToken().plaintext));
        expectRateLimited(await get(plaintext));
        expect(fresh.queries.queries).toEqual([]);

        clock.advance(60_000);
        expect((await get(plaintext)).status).toBe(200);
      } finally {
        await fresh.close();
      }
    });

    it('should not let a spoofed X-Forwarded-For reset the limit when no proxy is trusted', async () => {
      const fresh = await createTestApp(LIMITS);
      try {
        for (let i = 0; i < 3; i++) {
          await request(fresh.server).get('/api/v1/team').set('X-Forwarded-For', `10.0.0.${i}`);
        }
        const res = await request(fresh.server)
          .get('/api/v1/team')
          .set('X-Forwarded-For', '10.9.9.9');
        expectRateLimited(res);
      } finally {
        await fresh.close();
      }
    });

    it('should tell clients apart by X-Forwarded-For behind a trusted proxy', async () => {
      const proxied = await createTestApp({ ...LIMITS, TRUST_PROXY: '1' });
      try {
        for (let i = 0; i < 3; i++) {
          await request(proxied.server).get('/api/v1/team').set('X-Forwarded-For', '203.0.113.7');
        }
        expectRateLimited(
          await request(proxied.server).get('/api/v1/team').set('X-Forwarded-For', '203.0.113.7'),
        );
        const other = await request(proxied.server)
          .get('/api/v1/team')
          .set('X-Forwarded-For', '203.0.113.8');
        expect(other.status).toBe(401);
      } finally {
        await proxied.close();
      }
    });

    it('should limit sign-in per account, with the same page whatever failed', async () => {
      const email = uniqueEmail('limited');
      await new WebClient(t.server, t.mail).register('Limited', email, 'the right password');
      const attempts: number[] = [];
      for (let i = 0; i < 3; i++) {
        attempts.push(
          (await new WebClient(t.server, t.mail).login(email, 'a wrong password')).status,
        );
      }
      expect(attempts).toEqual([303, 303, 303]);
      const blocked = await new WebClient(t.server, t.mail).login(
        email.toUpperCase(),
        'the right password',
      );
      expectRateLimited(blocked);
      expect(blocked.headers['content-type']).toMatch(/^text\/html/);
      expect(blocked.text).toContain('Too many requests.');
    });

    it('should limit sign-in per client IP across accounts', async () => {
      const proxied = await createTestApp({ ...LIMITS, TRUST_PROXY: '1' });
      try {
        const statuses: number[] = [];
        for (let i = 0; i < 4; i++) {
          const client = new WebClient(proxied.server);
          const token = await client.csrfFrom('/login');
          const res = await client.agent
            .post('/login')
            .set('X-Forwarded-For', '198.51.100.4')
            .type('form')
            .send({ _csrf: token, email: uniqueEmail('spray'), password: 'password123' });
          statuses.push(res.status);
        }
        expect(statuses).toEqual([303, 303, 303, 429]);
      } finally {
        await proxied.close();
      }
    });

    it('should switch off entirely by configuration', async () => {
      const off = await createTestApp({ ...LIMITS, RATE_LIMIT_ENABLED: 'false' });
      try {
        for (let i = 0; i < 6; i++) {
          const res = await request(off.server).get('/api/v1/team');
          expect(res.status).toBe(401);
          expect(res.headers['ratelimit-limit']).toBeUndefined();
        }
      } finally {
        await off.close();
      }
    });
  });

  describe('shared through Redis', () => {
    let db: TestDatabase;
    let a: TestApp;
    let b: TestApp;

    beforeAll(async () => {
      db = await createTestDatabase({ file: true });
      const env = {
        ...LIMITS,
        REDIS_URL: testRedisUrl(),
        RATE_LIMIT_REDIS_PREFIX: `tessera-test:${randomBytes(6).toString('hex')}:`,
      };
      a = await createTestApp(env, { database: db });
      b = await createTestApp(env, { database: db });
    });
    afterAll(async () => {
      await a?.close();
      await b?.close();
      await db?.drop();
    });

    it("should count one token's requests on every instance together", async () => {
      const { plaintext } = await createToken(a.app, await createUser(a.app));
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        const server = i % 2 === 0 ? a.server : b.server;
        statuses.push(
          (await request(server).get('/api/v1/team').set('Authorization', `Bearer ${plaintext}`))
            .status,
        );
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    });
  });
});
