import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import request from 'supertest';
import { LOOKUPS_PER_FAILURE_LIMIT } from '../src/api/v1/api-authentication.js';
import { ManualClock } from '../src/clock/clock.js';
import { Actors } from '../src/common/actor.js';
import {
  RateLimitStorage,
  type MemoryRateLimitStorage,
} from '../src/rate-limit/rate-limit.storage.js';
import { Team } from '../src/teams/team.entity.js';
import { generateToken } from '../src/tokens/token-format.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { User } from '../src/users/user.entity.js';
import { createToken, createUser, uniqueEmail } from './factories/index.js';
import { visibleText } from './support/html.js';
import { burst } from './support/burst.js';
import { PASSWORD, signedInPerson } from './support/people.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { atTheChallenge, CHALLENGE, turnOnTwoFactor } from './support/two-factor.js';
import type { TestDatabase } from './support/test-database.js';
import { createTestDatabase } from './support/test-database.js';
import { WebClient } from './support/web-client.js';
import { testRedisUrl } from './support/redis.js';

const LIMITS = {
  RATE_LIMIT_API_PER_TOKEN: '5',
  RATE_LIMIT_API_ANONYMOUS_PER_IP: '3',
  RATE_LIMIT_SIGN_IN: '3',
};

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** The heap in use after full collections, in MB. */
function heapMb(): number {
  for (let i = 0; i < 3; i++) collectGarbage();
  return process.memoryUsage().heapUsed / 1_048_576;
}

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

  describe('limiter memory', () => {
    let t: TestApp;
    const MAX_KEYS = 500;

    /** Every limit far above what the specs send: only the bound on windows is tested. */
    const FLOODABLE = {
      TRUST_PROXY: '1',
      RATE_LIMIT_SIGN_IN: '1000000',
      RATE_LIMIT_API_ANONYMOUS_PER_IP: '1000000',
      RATE_LIMIT_REGISTER_PER_HOUR: '1000000',
    };

    beforeAll(async () => {
      t = await createTestApp({ ...FLOODABLE, RATE_LIMIT_MEMORY_MAX_KEYS: String(MAX_KEYS) });
    });
    afterAll(async () => {
      await t.close();
    });

    const storage = () => t.app.get(RateLimitStorage) as MemoryRateLimitStorage;

    it('should keep answering sign-in with a flat heap when 600 posts of 90 KB emails arrive, JSON and form', async () => {
      const client = new WebClient(t.server, t.mail);
      const csrf = await client.csrfFrom('/login');
      const before = heapMb();
      for (let i = 0; i < 600; i++) {
        const email = `${randomBytes(8).toString('hex')}${'a'.repeat(90 * 1024)}@example.com`;
        const post = client.agent.post('/login').set('X-Forwarded-For', `198.51.100.${i % 250}`);
        const res =
          i % 2 === 0
            ? await post.type('form').send({ _csrf: csrf, email, password: 'guess' })
            : await post.type('json').send({ _csrf: csrf, email, password: 'guess' });
        expect(res.status).toBe(303);
      }
      const grown = heapMb() - before;
      // Before the fix every email was a key: 600 × 90 KB ≈ 53 MB held until the window ended.
      expect(grown).toBeLessThan(10);
      expect(storage().sizeOf('security')).toBeLessThanOrEqual(MAX_KEYS);
      const page = await client.get('/login');
      expect(visibleText(page.text)).toContain('Email must be at most 255 characters.');
    });

    describe('with a small bound', () => {
      // Each flood brings half again as many keys as the bound: a small one proves the same.
      const MAX_KEYS = 100;
      let t: TestApp;

      beforeAll(async () => {
        t = await createTestApp({ ...FLOODABLE, RATE_LIMIT_MEMORY_MAX_KEYS: String(MAX_KEYS) });
      });
      afterAll(async () => {
        await t.close();
      });

      const storage = () => t.app.get(RateLimitStorage) as MemoryRateLimitStorage;
      const tokens = () => t.app.get(TokensService);

      it('should hold at most the configured number of windows when floods bring more keys', async () => {
        const user = await createUser(t.app, { password: PASSWORD });
        const floods: [string, (i: number) => Promise<request.Response>][] = [
          [
            'API failures per client IP',
            (i) =>
              request(t.server)
                .get('/api/v1/team')
                .set('X-Forwarded-For', `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`),
          ],
          [
            'API requests per token',
            async (i) =>
              request(t.server)
                .get('/api/v1/team')
                // Straight from the service: the factory waits for each token's notice mail.
                .set(
                  'Authorization',
                  `Bearer ${(await tokens().create(Actors.operator(user.id), { name: `flood ${i}` })).plaintext}`,
                ),
          ],
          [
            'sign-in failures per account and IP',
            async (i) => {
              const client = new WebClient(t.server, t.mail);
              const _csrf = await client.csrfFrom('/login');
              const res = await client.agent
                .post('/login')
                .set('X-Forwarded-For', `2001:db8:${i.toString(16)}::1`)
                .type('form')
                .send({ _csrf, email: uniqueEmail('flood'), password: 'guess' });
              // Live failure counts are never evicted: once they fill their pool, new attempts
              // wait (429) until windows end.
              expect(res.status === 429 || res.headers.location === '/login').toBe(true);
              return res;
            },
          ],
        ];
        for (const [name, send] of floods) {
          for (let i = 0; i < MAX_KEYS * 1.5; i++) {
            const res = await send(i);
            expect(res.status).toBeLessThan(500);
          }
          const bounded = (pool: 'traffic' | 'security') => storage().sizeOf(pool) <= MAX_KEYS;
          expect({ name, traffic: bounded('traffic'), security: bounded('security') }).toEqual({
            name,
            traffic: true,
            security: true,
          });
        }
      });
    });

    describe('two-factor codes under a flood of keys', () => {
      let t: TestApp;

      beforeAll(async () => {
        t = await createTestApp({ TRUST_PROXY: '1', RATE_LIMIT_MEMORY_MAX_KEYS: '100' });
      });
      afterAll(async () => {
        await t.close();
      });

      it("should keep a person's wrong two-factor codes counted when a flood brings more keys than the bound", async () => {
        const person = await signedInPerson(t);
        const app = await turnOnTwoFactor(t, person);
        await atTheChallenge(person);
        const right = app.code(1);
        const wrong = right === '123456' ? '654321' : '123456';
        for (let i = 0; i < 4; i++) {
          const res = await person.client.submit(CHALLENGE, CHALLENGE, { code: wrong });
          expect(res.headers.location).toBe(CHALLENGE);
        }
        // 150 clients that each start a count of their own: more than the in-process bound.
        const floods = await burst(150, t.server, (i) =>
          request(t.server)
            .get('/api/v1/team')
            .set('X-Forwarded-For', `10.${randomBytes(1)[0]}.${i >> 8}.${i & 255}`),
        );
        expect(floods.every((res) => res.status === 401)).toBe(true);

        const fifth = await person.client.submit(CHALLENGE, CHALLENGE, { code: wrong });
        expect(fifth.headers.location).toBe(CHALLENGE);
        const refused = await person.client.submit(CHALLENGE, CHALLENGE, { code: right });
        expect(refused.status).toBe(429);
        expect((await person.client.get('/dashboard')).headers.location).toBe('/login');
      });
    });
  });

  describe('client addresses behind a trusted proxy, registration and sign-in lockout', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await createTestApp({
        TRUST_PROXY: '1',
        RATE_LIMIT_API_ANONYMOUS_PER_IP: '3',
        RATE_LIMIT_SIGN_IN: '5',
        RATE_LIMIT_REGISTER_PER_HOUR: '3',
        RATE_LIMIT_TEAM_INVITES_PER_HOUR: '2',
      });
    });
    afterAll(async () => {
      await t.close();
    });

    async function signIn(email: string, password: string, ip: string) {
      const client = new WebClient(t.server, t.mail);
      const _csrf = await client.csrfFrom('/login');
      return client.agent
        .post('/login')
        .set('X-Forwarded-For', ip)
        .type('form')
        .send({ _csrf, email, password });
    }

    it('should not let a client escape the per-IP limit when it writes its own leftmost X-Forwarded-For', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        const res = await request(t.server)
          .get('/api/v1/team')
          .set('X-Forwarded-For', `192.0.2.${i}, 203.0.113.50`);
        statuses.push(res.status);
      }
      expect(statuses).toEqual([401, 401, 401, 429, 429]);
    });

    it('should limit registrations per client IP when some of the attempts fail', async () => {
      const statuses: number[] = [];
      let refused = '';
      for (let i = 0; i < 4; i++) {
        const client = new WebClient(t.server, t.mail);
        const _csrf = await client.csrfFrom('/register');
        const res = await client.agent
          .post('/register')
          .set('X-Forwarded-For', '203.0.113.60')
          .type('form')
          .send({
            _csrf,
            name: 'Flood',
            email: i === 1 ? 'not an email' : uniqueEmail('flood'),
            password: PASSWORD,
            password_confirmation: PASSWORD,
          });
        statuses.push(res.status);
        refused = res.text;
      }
      expect(statuses).toEqual([303, 303, 303, 429]);
      // The hour's window, in words a person reads: minutes, not thousands of seconds.
      expect(visibleText(refused)).toMatch(
        /Too many requests\. Try again in ([2-9]|[1-5]\d|60) minutes\./,
      );
      expect(await t.dataSource.getRepository(User).countBy({ name: 'Flood' })).toBe(2);
    });

    it('should sign the owner in from a clean IP when 10 failures on their account came from elsewhere', async () => {
      const email = uniqueEmail('target');
      await createUser(t.app, { email, password: PASSWORD });
      for (let i = 0; i < 10; i++) await signIn(email, 'a wrong guess', `198.51.100.${i % 2}`);

      expect((await signIn(email, PASSWORD, '198.51.100.0')).status).toBe(429);
      const owner = await signIn(email, PASSWORD, '203.0.113.77');
      expect(owner.status).toBe(303);
      expect(owner.headers.location).toBe('/dashboard');
    });

    it('should count an IPv6 client by its /64 when it rotates the low bits', async () => {
      const email = uniqueEmail('v6');
      await createUser(t.app, { email, password: PASSWORD });
      for (let i = 1; i <= 5; i++)
        await signIn(uniqueEmail('spray'), 'guess', `2001:db8:a:b::${i}`);
      expect((await signIn(email, PASSWORD, '2001:db8:a:b:ffff::9')).status).toBe(429);
      const elsewhere = await signIn(email, PASSWORD, '2001:db8:a:c::1');
      expect(elsewhere.status).toBe(303);
      expect(elsewhere.headers.location).toBe('/dashboard');
    });

    it('should limit how many people one person looks up and adds to a team when they invite by address', async () => {
      const client = new WebClient(t.server, t.mail);
      await client.register('Inviter', uniqueEmail('inviter'));
      await client.submit('/teams', '/teams', { name: 'Lookups' });
      const team = await t.dataSource.getRepository(Team).findOneByOrFail({ name: 'Lookups' });
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await client.submit(`/teams/${team.id}`, `/teams/${team.id}/invitations`, {
          email: uniqueEmail('probe'),
          role: 'member',
        });
        statuses.push(res.status);
      }
      expect(statuses).toEqual([303, 303, 429]);
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
