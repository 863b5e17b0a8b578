import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import request from 'supertest';
import { Session } from '../src/auth/session.entity.js';
import { burst } from './support/burst.js';
import { sessionIdOf } from './support/html.js';
import { signedInPerson } from './support/people.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';
import { TestSmtpServer } from './support/smtp-server.js';
import { atTheChallenge, CHALLENGE, turnOnTwoFactor } from './support/two-factor.js';
import { WebClient } from './support/web-client.js';

/**
 * One regression test (or more) per finding of the third security review; each failed before
 * its fix. They run on SQLite, and on MariaDB when TEST_DATABASE_URL names it; the races on two
 * instances sharing one database as well as on one. The limits under a burst of concurrent
 * requests (finding 1) have a spec of their own: limits-under-burst.e2e-spec.ts.
 */
describe('hardening, third round', () => {
  describe.each([
    ['one instance', 1],
    ['two instances', 2],
  ])('2. a session signed out from the Sessions page stays signed out: %s', (_name, count) => {
    let database: TestDatabase;
    let mail: TestSmtpServer;
    let apps: TestApp[] = [];
    let servers: Server[];

    beforeAll(async () => {
      database = await createTestDatabase({ file: true });
      mail = await TestSmtpServer.start();
      const env = {
        SESSION_SECRET: 'one secret shared by every instance of this deployment',
        RATE_LIMIT_ENABLED: 'false',
      };
      for (let i = 0; i < count; i++) apps.push(await createTestApp(env, { database, mail }));
      servers = apps.map((app) => app.server);
    });
    afterAll(async () => {
      for (const app of apps) await app.close();
      apps = [];
      await database.drop();
      await mail.stop();
    });

    it('should not bring a revoked session back, whatever requests of its own were in flight', async () => {
      const t = apps[0];
      for (let round = 0; round < 5; round++) {
        const owner = await signedInPerson(t);
        // Someone else holds a second session of the account, and keeps using it.
        const thief = new WebClient(t.server);
        const stolen = await thief.login(owner.email, owner.password);
        const sid = sessionIdOf(thief.sessionCookie(stolen)!);
        const page = (await owner.client.get('/settings/sessions')).text;
        const handle = /action="\/settings\/sessions\/([^/]+)\/revoke"/.exec(page)![1];
        const csrf = await owner.client.csrfFrom('/settings/sessions');

        // Each request looks like a new browser, so each one writes the session back as it ends.
        const thieves = servers.map((server) => thief.on(server));
        const flood = burst(40, servers, (i) =>
          thieves[i % thieves.length].get('/dashboard').set('User-Agent', `Thief/${round}.${i}`),
        );
        const revoked = owner.client.post(`/settings/sessions/${handle}/revoke`, csrf);
        const [answers, revoke] = await Promise.all([flood, revoked]);
        expect(revoke.headers.location).toBe('/settings/sessions');
        expect(answers.every((a) => a.status === 200 || a.status === 303)).toBe(true);

        expect(await t.dataSource.getRepository(Session).existsBy({ id: sid })).toBe(false);
        for (const client of thieves) {
          expect((await client.get('/dashboard')).headers.location).toBe('/login');
        }
        expect((await owner.client.get('/dashboard')).status).toBe(200);
      }
    }, 120_000);
  });

  describe('3. limiter memory', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await createTestApp({ TRUST_PROXY: '1', RATE_LIMIT_MEMORY_MAX_KEYS: '100' });
    });
    afterAll(async () => {
      await t.close();
    });

    it("should keep a person's wrong two-factor codes counted whatever a flood of other keys brings", async () => {
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
    }, 60_000);
  });
});
