import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import request from 'supertest';
import { LOOKUPS_PER_FAILURE_LIMIT } from '../src/api/v1/api-authentication.js';
import { OutboxMessage } from '../src/mail/outbox-message.entity.js';
import { TeamInvitation } from '../src/invitations/team-invitation.entity.js';
import { FIND_BY_HASH_SQL } from '../src/tokens/token-authenticator.js';
import { generateToken } from '../src/tokens/token-format.js';
import { User } from '../src/users/user.entity.js';
import { Actors } from '../src/common/actor.js';
import { WebhookDelivery } from '../src/webhooks/webhook-delivery.entity.js';
import { WebhooksService } from '../src/webhooks/webhooks.service.js';
import { createTeam, createToken, createUser, uniqueEmail } from './factories/index.js';
import { burst, tally } from './support/burst.js';
import { PASSWORD, signedInPerson, type SignedInPerson } from './support/people.js';
import { startInstances, type Instances } from './support/instances.js';
import type { TestApp } from './support/test-app.js';
import { atTheChallenge, CHALLENGE, turnOnTwoFactor } from './support/two-factor.js';
import { WebClient } from './support/web-client.js';
import { testRedisUrl } from './support/redis.js';

/** Small limits, so a burst of a hundred requests is twenty times over each of them. */
const LIMITS = {
  TRUST_PROXY: '1',
  RATE_LIMIT_SIGN_IN: '10',
  RATE_LIMIT_TWO_FACTOR: '5',
  RATE_LIMIT_REGISTER_PER_HOUR: '5',
  RATE_LIMIT_PASSWORD_RESET_PER_HOUR: '5',
  RATE_LIMIT_MAIL_PER_ADDRESS_PER_HOUR: '5',
  RATE_LIMIT_VERIFY_RESEND_PER_HOUR: '5',
  RATE_LIMIT_TEAM_INVITES_PER_HOUR: '5',
  RATE_LIMIT_EMAIL_CHANGE_PER_HOUR: '5',
  RATE_LIMIT_WEBHOOK_TESTS_PER_HOUR: '5',
  // Test events go to a port of this machine where nothing listens.
  WEBHOOK_ALLOWED_RANGES: '127.0.0.1/32',
  RATE_LIMIT_API_ANONYMOUS_PER_IP: '10',
  RATE_LIMIT_API_PER_TOKEN: '10',
};

/** A client address of its own for each test, so that no two share a per-IP count. */
const clientIp = () => `198.51.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;

/** Refused unchecked (429), or let through to the check: what a burst is counted by. */
const outcome = (res: request.Response) => (res.status === 429 ? 'refused' : 'checked');

/**
 * Every limiter, hit by a burst of identical requests sent at the same moment: the count of
 * requests let through to the check is the limit, never more. Run against one instance
 * (counters in process) and against two instances sharing their database and Redis, with the
 * requests taking turns between them. A check and the record of it are one atomic step; before
 * that, every request in flight passed the look at the count.
 */
describe.each([
  ['one instance', 1],
  ['two instances sharing Redis', 2],
])('limits under a burst of concurrent requests: %s', (_name, count) => {
  let instances: Instances;
  let apps: TestApp[];
  let servers: Server[];
  let t: TestApp;

  beforeAll(async () => {
    // Two instances share their counters through Redis, under a prefix of their own.
    const redis = {
      REDIS_URL: testRedisUrl(),
      RATE_LIMIT_REDIS_PREFIX: `tessera-test:${randomBytes(6).toString('hex')}:`,
    };
    instances = await startInstances(count, count > 1 ? { ...LIMITS, ...redis } : LIMITS);
    ({ apps, servers, first: t } = instances);
  });
  afterAll(async () => {
    await instances?.close();
  });

  /** A person signed in through the first instance; their browser's cookies go to every one. */
  const person = (): Promise<SignedInPerson> => signedInPerson(t);

  it('should check exactly RATE_LIMIT_SIGN_IN of 100 wrong passwords sent at once from one address', async () => {
    const email = uniqueEmail('burst');
    await createUser(t.app, { email, password: PASSWORD });
    const client = new WebClient(t.server);
    const csrf = await client.csrfFrom('/login');
    const ip = clientIp();
    const browsers = client.onEach(servers);
    const answers = await burst(100, servers, (i) =>
      browsers[i % browsers.length].agent
        .post('/login')
        .set('X-Forwarded-For', ip)
        .type('form')
        .send({ _csrf: csrf, email, password: `wrong ${i}` }),
    );
    expect(tally(answers, outcome)).toEqual({ checked: 10, refused: 90 });
    // The right password from there is refused too: the address is out of attempts.
    const right = await client.agent
      .post('/login')
      .set('X-Forwarded-For', ip)
      .type('form')
      .send({ _csrf: csrf, email, password: PASSWORD });
    expect(right.status).toBe(429);
  });

  it('should check exactly RATE_LIMIT_SIGN_IN of 100 wrong passwords typed again in sudo mode at once', async () => {
    const someone = await person();
    const csrf = await someone.client.csrfFrom('/confirm-password');
    const browsers = someone.client.onEach(servers);
    const ip = clientIp();
    const answers = await burst(100, servers, (i) =>
      browsers[i % browsers.length]
        .post('/confirm-password', csrf, { password: `wrong ${i}` })
        .set('X-Forwarded-For', ip),
    );
    expect(tally(answers, outcome)).toEqual({ checked: 10, refused: 90 });
    expect(answers.filter((a) => a.status !== 429).map((a) => a.headers.location)).toEqual(
      Array(10).fill('/confirm-password'),
    );
  });

  it('should check exactly RATE_LIMIT_TWO_FACTOR of 200 codes sent at once, so the right one sent 150th cannot get in', async () => {
    const someone = await person();
    const app = await turnOnTwoFactor(t, someone);
    await atTheChallenge(someone);
    const csrf = await someone.client.csrfFrom(CHALLENGE);
    // The next step's code: the one that confirmed the setup cannot be used again.
    const right = app.code(1);
    const wrong = (i: number) => {
      const code = String(100_000 + i);
      return code === right ? '999999' : code;
    };
    const browsers = someone.client.onEach(servers);
    const answers = await burst(200, servers, (i) =>
      browsers[i % browsers.length].post(CHALLENGE, csrf, { code: i === 149 ? right : wrong(i) }),
    );
    const counts = tally(answers, (res) =>
      res.status === 429 ? 'refused' : res.headers.location === CHALLENGE ? 'wrong' : 'in',
    );
    // Five codes were checked in all; the right one was among them only if it came that early.
    expect((counts.wrong ?? 0) + (counts.in ?? 0)).toBe(5);
    expect(counts.refused).toBe(195);
    expect(answers[149].status).toBe(429);
    expect((await someone.client.get('/dashboard')).status).toBe(303);
  });

  it('should register exactly RATE_LIMIT_REGISTER_PER_HOUR of 30 sign-ups sent at once from one address', async () => {
    const client = new WebClient(t.server);
    const csrf = await client.csrfFrom('/register');
    const ip = clientIp();
    const browsers = client.onEach(servers);
    const emails = Array.from({ length: 30 }, () => uniqueEmail('signup'));
    const answers = await burst(30, servers, (i) =>
      browsers[i % browsers.length].agent
        .post('/register')
        .set('X-Forwarded-For', ip)
        .type('form')
        .send({
          _csrf: csrf,
          name: `Sign-up ${i}`,
          email: emails[i],
          password: PASSWORD,
          password_confirmation: PASSWORD,
        }),
    );
    expect(tally(answers, outcome)).toEqual({ checked: 5, refused: 25 });
    const users = await t.dataSource
      .getRepository(User)
      .countBy(emails.map((email) => ({ email })));
    expect(users).toBe(5);
  });

  it('should take exactly RATE_LIMIT_PASSWORD_RESET_PER_HOUR of 30 reset requests sent at once from one address', async () => {
    const client = new WebClient(t.server);
    const csrf = await client.csrfFrom('/forgot-password');
    const ip = clientIp();
    const browsers = client.onEach(servers);
    const answers = await burst(30, servers, (i) =>
      browsers[i % browsers.length].agent
        .post('/forgot-password')
        .set('X-Forwarded-For', ip)
        .type('form')
        .send({ _csrf: csrf, email: uniqueEmail('nobody') }),
    );
    expect(tally(answers, outcome)).toEqual({ checked: 5, refused: 25 });
  });

  it('should mail one address exactly RATE_LIMIT_MAIL_PER_ADDRESS_PER_HOUR reset links of 30 asked for at once', async () => {
    const email = uniqueEmail('flooded');
    await createUser(t.app, { email });
    const client = new WebClient(t.server);
    const csrf = await client.csrfFrom('/forgot-password');
    const browsers = client.onEach(servers);
    // From as many addresses as requests: only the limit per mailbox is at work.
    const answers = await burst(30, servers, (i) =>
      browsers[i % browsers.length].agent
        .post('/forgot-password')
        .set('X-Forwarded-For', `203.0.113.${i + 1}`)
        .type('form')
        .send({ _csrf: csrf, email }),
    );
    // The answer is the same past the limit: it must not tell whether the address has an account.
    expect(answers.map((a) => a.status)).toEqual(Array(30).fill(303));
    const queued = await t.dataSource.getRepository(OutboxMessage).countBy({ recipient: email });
    expect(queued).toBe(5);
  });

  it('should send exactly RATE_LIMIT_VERIFY_RESEND_PER_HOUR of 30 new confirmation links asked for at once', async () => {
    const email = uniqueEmail('unconfirmed');
    const user = await createUser(t.app, { email, password: PASSWORD, verified: false });
    const client = new WebClient(t.server);
    await client.login(email);
    const csrf = await client.csrfFrom('/settings/api-tokens');
    const browsers = client.onEach(servers);
    const answers = await burst(30, servers, (i) =>
      browsers[i % browsers.length].post('/verify-email/resend', csrf),
    );
    expect(tally(answers, outcome)).toEqual({ checked: 5, refused: 25 });
    const queued = await t.dataSource
      .getRepository(OutboxMessage)
      .countBy({ recipient: email, kind: 'verify-email' });
    expect(queued).toBe(5);
    expect(user.id).toBeGreaterThan(0);
  });

  it('should send exactly RATE_LIMIT_TEAM_INVITES_PER_HOUR of 30 invitations sent at once', async () => {
    const owner = await person();
    const team = await createTeam(t.app, owner.user, 'Burst');
    const csrf = await owner.client.csrfFrom(`/teams/${team.id}`);
    const browsers = owner.client.onEach(servers);
    const answers = await burst(30, servers, (i) =>
      browsers[i % browsers.length].post(`/teams/${team.id}/invitations`, csrf, {
        email: uniqueEmail(`invitee${i}`),
        role: 'member',
      }),
    );
    expect(tally(answers, outcome)).toEqual({ checked: 5, refused: 25 });
    expect(await t.dataSource.getRepository(TeamInvitation).countBy({ teamId: team.id })).toBe(5);
  });

  it("should send exactly RATE_LIMIT_TEAM_INVITES_PER_HOUR of 30 invitations sent at once through the team's page and the API together", async () => {
    const owner = await person();
    const team = await createTeam(t.app, owner.user, 'Burst Both');
    const { plaintext } = await createToken(t.app, owner.user, {
      abilities: ['members:write'],
      teamId: team.id,
    });
    const csrf = await owner.client.csrfFrom(`/teams/${team.id}`);
    const browsers = owner.client.onEach(servers);
    // Without the limit on the API, its half alone would invite RATE_LIMIT_API_PER_TOKEN (10).
    const answers = await burst(30, servers, (i, server) =>
      i % 2 === 0
        ? browsers[i % browsers.length].post(`/teams/${team.id}/invitations`, csrf, {
            email: uniqueEmail(`page-invitee${i}`),
            role: 'member',
          })
        : request(server)
            .post('/api/v1/team/invitations')
            .set('Authorization', `Bearer ${plaintext}`)
            .send({ email: uniqueEmail(`api-invitee${i}`), role: 'member' }),
    );
    expect(tally(answers, outcome)).toEqual({ checked: 5, refused: 25 });
    expect(await t.dataSource.getRepository(TeamInvitation).countBy({ teamId: team.id })).toBe(5);
    const refused = answers.find((a) => a.status === 429 && a.body?.error)!;
    expect(refused.body.error.code).toBe('rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('should count an invitation sent at once with one Idempotency-Key once, its replays not at all', async () => {
    const owner = await person();
    const team = await createTeam(t.app, owner.user, 'Replayed');
    // Tokens of one owner share their keys; each takes RATE_LIMIT_API_PER_TOKEN (10) requests.
    const tokens = await Promise.all(
      [0, 1, 2].map(async () => {
        const made = await createToken(t.app, owner.user, {
          abilities: ['members:write'],
          teamId: team.id,
        });
        return made.plaintext;
      }),
    );
    const invite = (token: string, server: (typeof servers)[number], key: string, email: string) =>
      request(server)
        .post('/api/v1/team/invitations')
        .set('Authorization', `Bearer ${token}`)
        .set('Idempotency-Key', key)
        .send({ email, role: 'member' });
    const once = uniqueEmail('invited-once');
    const answers = await burst(10, servers, (_, server) =>
      invite(tokens[0], server, 'the-one-key', once),
    );
    // The first acts; the others wait for it (409) or get its answer again: none is refused.
    const counts = tally(answers, (res) => String(res.status));
    expect(counts['201']).toBeGreaterThanOrEqual(1);
    expect((counts['201'] ?? 0) + (counts['409'] ?? 0)).toBe(10);
    expect(await t.dataSource.getRepository(TeamInvitation).countBy({ teamId: team.id })).toBe(1);

    // So the hour's other four go through, the fifth is refused, and the key still replays.
    for (let i = 0; i < 4; i++) {
      const res = await invite(
        tokens[1],
        servers[i % servers.length],
        `key-${i}`,
        uniqueEmail('invited'),
      );
      expect(res.status).toBe(201);
    }
    const over = await invite(tokens[1], servers[0], 'key-over', uniqueEmail('invited'));
    expect(over.status).toBe(429);
    const replayed = await invite(tokens[2], servers.at(-1)!, 'the-one-key', once);
    expect(replayed.status).toBe(201);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(await t.dataSource.getRepository(TeamInvitation).countBy({ teamId: team.id })).toBe(5);
  });

  it('should mail exactly RATE_LIMIT_EMAIL_CHANGE_PER_HOUR of 30 address changes asked for at once', async () => {
    const someone = await person();
    const csrf = await someone.client.csrfFrom('/settings/profile');
    const browsers = someone.client.onEach(servers);
    const targets = Array.from({ length: 30 }, () => uniqueEmail('stranger'));
    const answers = await burst(30, servers, (i) =>
      browsers[i % browsers.length].post('/settings/profile', csrf, {
        name: 'Spam Relay',
        email: targets[i],
      }),
    );
    const counts = tally(answers, outcome);
    expect(counts).toEqual({ checked: 5, refused: 25 });
    const refused = answers.find((a) => a.status === 429)!;
    expect(refused.text).toContain('You have asked to change your address too often.');
    const mailed = await t.dataSource
      .getRepository(OutboxMessage)
      .countBy(targets.map((recipient) => ({ recipient, kind: 'change-email' })));
    expect(mailed).toBe(5);
  });

  it('should queue exactly RATE_LIMIT_WEBHOOK_TESTS_PER_HOUR of 30 webhook test events sent at once', async () => {
    const someone = await person();
    const team = await createTeam(t.app, someone.user, 'Test Events');
    const { endpoint } = await t.app.get(WebhooksService).create(Actors.operator(), team.id, {
      url: 'http://127.0.0.1:9/hook',
      events: ['member.joined'],
    });
    const page = `/teams/${team.id}/webhooks/${endpoint.id}`;
    const csrf = await someone.client.csrfFrom(page);
    const browsers = someone.client.onEach(servers);
    const answers = await burst(30, servers, (i) =>
      browsers[i % browsers.length].post(`${page}/test`, csrf),
    );
    expect(tally(answers, outcome)).toEqual({ checked: 5, refused: 25 });
    expect(answers.find((a) => a.status === 429)!.text).toContain(
      'You have sent test events too often.',
    );
    expect(
      await t.dataSource
        .getRepository(WebhookDelivery)
        .countBy({ endpointId: endpoint.id, eventType: 'webhook.test' }),
    ).toBe(5);
  });

  /** The lookups by hash both instances made (not a background job's read of the tokens). */
  const lookups = () =>
    apps.flatMap((app) => app.queries.queries).filter((q) => q === FIND_BY_HASH_SQL).length;

  it('should answer exactly RATE_LIMIT_API_ANONYMOUS_PER_IP of 100 tokens sent at once from one address 401, the other unknown ones 429, and a valid one among them 200', async () => {
    const owner = await createUser(t.app);
    const { plaintext } = await createToken(t.app, owner);
    const ip = clientIp();
    for (const app of apps) app.queries.clear();
    const answers = await burst(100, servers, (i, server) =>
      request(server)
        .get('/api/v1/user/profile')
        .set('X-Forwarded-For', ip)
        // Well formed, so each one that is let through costs a lookup.
        .set('Authorization', `Bearer ${i === 60 ? plaintext : generateToken().plaintext}`),
    );
    expect(tally(answers, (res) => String(res.status))).toEqual({ '401': 10, '429': 89, '200': 1 });
    expect(answers[60].status).toBe(200);
    // Within ten times the failure limit, every token is looked up: a valid one must be found.
    expect(lookups()).toBe(100);
  });

  it(`should look up exactly ${LOOKUPS_PER_FAILURE_LIMIT} times RATE_LIMIT_API_ANONYMOUS_PER_IP of 150 unknown tokens sent at once from one address`, async () => {
    const ip = clientIp();
    for (const app of apps) app.queries.clear();
    const answers = await burst(150, servers, (_i, server) =>
      request(server)
        .get('/api/v1/user/profile')
        .set('X-Forwarded-For', ip)
        .set('Authorization', `Bearer ${generateToken().plaintext}`),
    );
    expect(tally(answers, (res) => String(res.status))).toEqual({ '401': 10, '429': 140 });
    expect(lookups()).toBe(10 * LOOKUPS_PER_FAILURE_LIMIT);
  });

  it('should answer exactly RATE_LIMIT_API_PER_TOKEN of 50 requests of one token sent at once', async () => {
    const owner = await createUser(t.app);
    const { plaintext } = await createToken(t.app, owner);
    const answers = await burst(50, servers, (_i, server) =>
      request(server)
        .get('/api/v1/team')
        .set('X-Forwarded-For', clientIp())
        .set('Authorization', `Bearer ${plaintext}`),
    );
    expect(tally(answers, (res) => String(res.status))).toEqual({ '200': 10, '429': 40 });
  });
});
