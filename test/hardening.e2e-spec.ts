import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Actors } from '../src/common/actor.js';
import { randomBytes } from 'node:crypto';
import { connect, type AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import request from 'supertest';
import { In, IsNull, Not } from 'typeorm';
import { GUEST_SESSION_MS } from '../src/auth/web-session.js';
import { Session } from '../src/auth/session.entity.js';
import {
  RateLimitStorage,
  type MemoryRateLimitStorage,
} from '../src/rate-limit/rate-limit.storage.js';
import { TeamMember } from '../src/teams/team-member.entity.js';
import { Team } from '../src/teams/team.entity.js';
import { User } from '../src/users/user.entity.js';
import { addMember, createUser, uniqueEmail } from './factories/index.js';
import { sessionIdOf, visibleText } from './support/html.js';
import { LogCapture } from './support/log-capture.js';
import { signedInPerson } from './support/people.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';
import { WebClient } from './support/web-client.js';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** The heap in use after full collections, in MB. */
function heapMb(): number {
  for (let i = 0; i < 3; i++) collectGarbage();
  return process.memoryUsage().heapUsed / 1_048_576;
}

const PASSWORD = 'correct horse battery';

/**
 * One regression test (or more) per finding of the second security review; each failed before
 * its fix. They run on SQLite, and on MariaDB when TEST_DATABASE_URL names it.
 */
describe('hardening', () => {
  describe('1. bounded limiter memory', () => {
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

    it('should keep answering sign-in with a flat heap after 600 posts of 90 KB emails, JSON and form', async () => {
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

      it('should hold at most the configured number of windows whatever keys a flood brings', async () => {
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
  });

  describe('2, 3, 5. client IPs, registration and sign-in lockout', () => {
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

    it('should not let a client escape the per-IP limit by choosing the leftmost X-Forwarded-For', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        const res = await request(t.server)
          .get('/api/v1/team')
          .set('X-Forwarded-For', `192.0.2.${i}, 203.0.113.50`);
        statuses.push(res.status);
      }
      expect(statuses).toEqual([401, 401, 401, 429, 429]);
    });

    it('should limit registrations per client IP, and count the attempts that fail', async () => {
      const statuses: number[] = [];
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
      }
      expect(statuses).toEqual([303, 303, 303, 429]);
      expect(await t.dataSource.getRepository(User).countBy({ name: 'Flood' })).toBe(2);
    });

    it('should sign the owner in from a clean IP after 10 failures on their account from elsewhere', async () => {
      const email = uniqueEmail('target');
      await createUser(t.app, { email, password: PASSWORD });
      for (let i = 0; i < 10; i++) await signIn(email, 'a wrong guess', `198.51.100.${i % 2}`);

      expect((await signIn(email, PASSWORD, '198.51.100.0')).status).toBe(429);
      const owner = await signIn(email, PASSWORD, '203.0.113.77');
      expect(owner.status).toBe(303);
      expect(owner.headers.location).toBe('/dashboard');
    });

    it('should count an IPv6 client by its /64, so rotating the low bits does not escape', async () => {
      const email = uniqueEmail('v6');
      await createUser(t.app, { email, password: PASSWORD });
      for (let i = 1; i <= 5; i++)
        await signIn(uniqueEmail('spray'), 'guess', `2001:db8:a:b::${i}`);
      expect((await signIn(email, PASSWORD, '2001:db8:a:b:ffff::9')).status).toBe(429);
      const elsewhere = await signIn(email, PASSWORD, '2001:db8:a:c::1');
      expect(elsewhere.status).toBe(303);
      expect(elsewhere.headers.location).toBe('/dashboard');
    });

    it('should limit how many people one person can look up and add to a team', async () => {
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

  describe('3. password hashing never starves sign-in', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await createTestApp({ RATE_LIMIT_ENABLED: 'false' });
    });
    afterAll(async () => {
      await t.close();
    });

    it('should sign a person in while 40 registrations wait or are turned away', async () => {
      const email = uniqueEmail('busy');
      await createUser(t.app, { email, password: PASSWORD });
      const forms = await Promise.all(
        Array.from({ length: 40 }, async () => {
          const client = new WebClient(t.server, t.mail);
          return { client, _csrf: await client.csrfFrom('/register') };
        }),
      );
      const signInClient = new WebClient(t.server, t.mail);
      const signInCsrf = await signInClient.csrfFrom('/login');

      const finished: string[] = [];
      const registrations = forms.map(({ client, _csrf }, i) =>
        client.agent
          .post('/register')
          .type('form')
          .send({
            _csrf,
            name: `Busy ${i}`,
            email: uniqueEmail('busy-reg'),
            password: PASSWORD,
            password_confirmation: PASSWORD,
          })
          .then((res) => {
            finished.push('registration');
            return res;
          }),
      );
      const signIn = signInClient.agent
        .post('/login')
        .type('form')
        .send({ _csrf: signInCsrf, email, password: PASSWORD })
        .then((res) => {
          finished.push('sign-in');
          return res;
        });
      const [signedIn, ...registered] = await Promise.all([signIn, ...registrations]);

      expect(signedIn.status).toBe(303);
      expect(signedIn.headers.location).toBe('/dashboard');
      // Sign-in did not wait behind the registrations' hashes.
      expect(finished.indexOf('sign-in')).toBeLessThan(finished.length - 1);
      const statuses = registered.map((r) => r.status);
      expect(statuses.every((s) => s === 303 || s === 503)).toBe(true);
      expect(statuses.filter((s) => s === 503).length).toBeGreaterThan(0);
      const busy = registered.find((r) => r.status === 503)!;
      expect(busy.headers['retry-after']).toBe('1');
      expect(visibleText(busy.text)).toContain('The server is busy. Try again in a moment.');
      const created = await t.dataSource.getRepository(User).countBy({ name: Not(IsNull()) });
      expect(created).toBe(1 + statuses.filter((s) => s === 303).length);
    });
  });

  describe('6, 7, 8, 9. odd requests, large forms, busy names, anonymous sessions', () => {
    let t: TestApp;
    let database: TestDatabase;
    const logs = new LogCapture();

    beforeAll(async () => {
      // A file on SQLite, so that a second instance can share it.
      database = await createTestDatabase({ file: true });
      t = await createTestApp(
        { RATE_LIMIT_ENABLED: 'false', LOG_LEVEL: 'warn' },
        { database, logs },
      );
    });
    afterAll(async () => {
      await t.close();
      await database.drop();
    });

    it('should answer OPTIONS * like an unknown route, with no error logged', async () => {
      const { port } = t.server.address() as AddressInfo;
      for (let i = 0; i < 3; i++) {
        const answer = await new Promise<string>((resolve, reject) => {
          let text = '';
          const socket = connect(port, '127.0.0.1', () =>
            socket.write('OPTIONS * HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'),
          );
          socket.setEncoding('utf8');
          socket.on('data', (chunk: string) => (text += chunk));
          socket.on('end', () => resolve(text));
          socket.on('error', reject);
        });
        expect(answer).toMatch(/^HTTP\/1\.1 404 /);
      }
      expect(logs.entries.filter((e) => e.level === 'error' || e.level === 'fatal')).toEqual([]);
    });

    it('should keep only the form’s own fields when a form of 90 KB is refused', async () => {
      const client = new WebClient(t.server, t.mail);
      await client.register('Big Form', uniqueEmail('big'));
      const res = await client.submit('/teams', '/teams', {
        name: 'x'.repeat(30_000),
        padding: 'p'.repeat(60_000),
        more: 'm'.repeat(5_000),
      });
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe('/teams');
      const page = await client.get('/teams');
      expect(page.status).toBe(200);
      expect(visibleText(page.text)).toContain('Team name must be 1 to 100 characters.');
      const sessions = await t.dataSource.getRepository(Session).find();
      expect(sessions.every((s) => s.data.length < 5_000)).toBe(true);
    });

    it('should give every one of 30 teams created at once with one name a slug, with no error', async () => {
      const owner = await createUser(t.app, { password: PASSWORD });
      const second = await createTestApp({ RATE_LIMIT_ENABLED: 'false' }, { database: t.database });
      try {
        const clients = await Promise.all(
          Array.from({ length: 30 }, async (_, i) => {
            const client = new WebClient((i % 2 ? second : t).server);
            await client.login(owner.email, PASSWORD);
            return { client, _csrf: await client.csrfFrom('/teams') };
          }),
        );
        const answers = await Promise.all(
          clients.map(({ client, _csrf }) =>
            client.agent.post('/teams').type('form').send({ _csrf, name: 'Rush Hour' }),
          ),
        );
        expect(answers.map((a) => a.status)).toEqual(Array(30).fill(303));
        const teams = await t.dataSource.getRepository(Team).findBy({ name: 'Rush Hour' });
        expect(teams).toHaveLength(30);
        expect(new Set(teams.map((team) => team.slug)).size).toBe(30);
        expect(teams.map((team) => team.slug)).toContain('rush-hour');
        const owners = await t.dataSource
          .getRepository(TeamMember)
          .findBy({ teamId: In(teams.map((team) => team.id)), role: 'owner' });
        expect(owners).toHaveLength(30);
      } finally {
        await second.close();
      }
    });

    it('should store no session for anonymous visits, forms included, and let a message’s session end within minutes', async () => {
      const sessions = t.dataSource.getRepository(Session);
      const anonymous = () => sessions.countBy({ userId: IsNull() });
      const before = await anonymous();
      for (let i = 0; i < 100; i++) {
        for (const path of ['/dashboard', '/teams', '/settings/api-tokens', '/', '/nowhere']) {
          expect((await request(t.server).get(path)).status).toBeLessThan(500);
        }
      }
      expect(await anonymous()).toBe(before);
      // Nor for the forms: their CSRF token lives in a cookie, signed, not in a session.
      for (let i = 0; i < 100; i++) {
        for (const path of ['/login', '/register', '/forgot-password']) {
          const page = await request(t.server).get(path);
          expect(page.text).toContain('name="_csrf"');
          expect(String(page.headers['set-cookie'])).not.toContain('tessera.sid=');
        }
      }
      expect(await anonymous()).toBe(before);

      // A message to show (a refused sign-in) is kept, in a session that ends within minutes.
      const visitor = new WebClient(t.server, t.mail);
      const refused = await visitor.login(uniqueEmail('nobody'), 'a guess');
      const cookie = visitor.sessionCookie(refused)!;
      const row = await sessions.findOneByOrFail({ id: sessionIdOf(cookie) });
      expect(row.expiresAt.getTime()).toBeLessThanOrEqual(Date.now() + GUEST_SESSION_MS + 1000);

      const email = uniqueEmail('full');
      await createUser(t.app, { email, password: PASSWORD });
      const signedIn = await visitor.login(email, PASSWORD);
      const member = await sessions.findOneByOrFail({
        id: sessionIdOf(visitor.sessionCookie(signedIn)!),
      });
      expect(member.expiresAt.getTime()).toBeGreaterThan(Date.now() + 60 * 60_000);
    });
  });

  describe('10. team admins', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await createTestApp({ RATE_LIMIT_ENABLED: 'false' });
    });
    afterAll(async () => {
      await t.close();
    });

    it('should let only the owner remove an admin; an admin removes members only', async () => {
      const [owner, adminA, adminB, member] = await Promise.all(
        ['Owner', 'Admin A', 'Admin B', 'Member'].map((name) =>
          signedInPerson(t, {
            name,
            email: uniqueEmail(name.replace(' ', '').toLowerCase()),
            register: true,
          }),
        ),
      );
      await owner.client.submit('/teams', '/teams', { name: 'Guarded' });
      const team = await t.dataSource.getRepository(Team).findOneByOrFail({ name: 'Guarded' });
      for (const [who, role] of [
        [adminA, 'admin'],
        [adminB, 'admin'],
        [member, 'member'],
      ] as const) {
        await addMember(t.app, team.id, who.user, role);
      }
      const memberIds = async () =>
        (await t.dataSource.getRepository(TeamMember).findBy({ teamId: team.id }))
          .map((m) => m.userId)
          .sort((a, b) => a - b);
      const everyone = await memberIds();
      expect(everyone).toHaveLength(4);

      const page = await adminA.client.get(`/teams/${team.id}`);
      expect(page.text).not.toContain(`/members/${adminB.user.id}/remove`);
      expect(page.text).toContain(`/members/${member.user.id}/remove`);

      const refused = await adminA.client.submit(
        `/teams/${team.id}`,
        `/teams/${team.id}/members/${adminB.user.id}/remove`,
      );
      expect(refused.status).toBe(403);
      expect(visibleText(refused.text)).toContain('Only the team owner can remove an admin.');
      expect(await memberIds()).toEqual(everyone);

      const removed = await adminA.client.submit(
        `/teams/${team.id}`,
        `/teams/${team.id}/members/${member.user.id}/remove`,
      );
      expect(removed.status).toBe(303);
      const byOwner = await owner.client.submit(
        `/teams/${team.id}`,
        `/teams/${team.id}/members/${adminB.user.id}/remove`,
      );
      expect(byOwner.status).toBe(303);
      expect(await memberIds()).toEqual([owner.user.id, adminA.user.id].sort((a, b) => a - b));
    });
  });
});
