import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import request from 'supertest';
import { AuditEvent } from '../src/audit/audit-event.entity.js';
import { AuditLog } from '../src/audit/audit-log.js';
import { Actors } from '../src/common/actor.js';
import { OutboxMessage } from '../src/mail/outbox-message.entity.js';
import { RateLimitStorage } from '../src/rate-limit/rate-limit.storage.js';
import { RedisRateLimitStorage } from '../src/rate-limit/redis-rate-limit.storage.js';
import { User } from '../src/users/user.entity.js';
import { WebhookDelivery } from '../src/webhooks/webhook-delivery.entity.js';
import { WebhooksService } from '../src/webhooks/webhooks.service.js';
import { createTeam, createToken, createUser, uniqueEmail } from './factories/index.js';
import { burst, tally } from './support/burst.js';
import { visibleText } from './support/html.js';
import { SHARED_SECRET } from './support/instances.js';
import { LogCapture } from './support/log-capture.js';
import { PASSWORD, signedInPerson } from './support/people.js';
import { TestSmtpServer } from './support/smtp-server.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';
import { atTheChallenge, CHALLENGE, turnOnTwoFactor } from './support/two-factor.js';
import { waitFor } from './support/wait-for.js';
import { WebClient } from './support/web-client.js';
import { testRedisUrl } from './support/redis.js';

const REDIS = new URL(testRedisUrl());
const METRICS_TOKEN = 'metrics-scraper-secret-0123456789abcdef';

/** Small limits, so that a burst is well over each of them. */
const LIMITS = {
  TRUST_PROXY: '1',
  RATE_LIMIT_SIGN_IN: '10',
  RATE_LIMIT_TWO_FACTOR: '5',
  RATE_LIMIT_API_PER_TOKEN: '10',
  RATE_LIMIT_PASSWORD_RESET_PER_HOUR: '100',
  RATE_LIMIT_REGISTER_PER_HOUR: '100',
  WEBHOOK_ALLOWED_RANGES: '127.0.0.1/32',
};

const clientIp = () => `198.51.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;

/** A sample of a Prometheus text exposition (0 when the series is not there). */
function sample(body: string, series: string): number {
  const line = body.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

/**
 * Two instances sharing their database and Redis, Redis reached through a proxy that cuts
 * connections (TCP RST) or black-holes them. While Redis cannot count, the limits that guard a
 * secret or mail to others refuse unchecked (503, Retry-After), on every instance, and the API
 * answers uncounted; once Redis is back each instance counts again by itself, with no restart.
 */
describe('limits while Redis cannot be reached', () => {
  let proxy: TcpProxy;
  let database: TestDatabase;
  let mail: TestSmtpServer;
  // Nest's loggers write through the app that set them up last, so both instances' lines may
  // land in either capture: the specs count them over both.
  const logs = [new LogCapture(), new LogCapture()];
  const apps: TestApp[] = [];
  let servers: Server[];
  let t: TestApp;

  beforeAll(async () => {
    proxy = await new TcpProxy(REDIS.hostname, Number(REDIS.port || 6379)).start();
    database = await createTestDatabase({ file: true });
    mail = await TestSmtpServer.start();
    // One deployment: the instances share their counters, under a prefix of this spec's own.
    const prefix = `tessera-test:${randomBytes(6).toString('hex')}:`;
    for (const log of logs) {
      apps.push(
        await createTestApp(
          {
            ...LIMITS,
            SESSION_SECRET: SHARED_SECRET,
            LOG_LEVEL: 'log',
            REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
            RATE_LIMIT_REDIS_PREFIX: prefix,
            // Long enough that a busy machine does not time a Redis that answers out.
            REDIS_COMMAND_TIMEOUT_MS: '2000',
            METRICS_ENABLED: 'true',
            METRICS_TOKEN,
          },
          { database, mail, logs: log },
        ),
      );
    }
    servers = apps.map((app) => app.server);
    t = apps[0];
  });
  afterEach(async () => {
    proxy.heal();
    await countingAgain();
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await database?.drop();
    await mail?.stop();
    await proxy?.stop();
  });

  /** Each instance counts again: a wrong password from an address of its own is checked. */
  const countingAgain = () =>
    Promise.all(
      servers.map((server) =>
        waitFor(async () => {
          const client = new WebClient(server);
          const _csrf = await client.csrfFrom('/login');
          const res = await client.agent
            .post('/login')
            .set('X-Forwarded-For', clientIp())
            .type('form')
            .send({ _csrf, email: uniqueEmail('probe'), password: 'probe' });
          return res.status === 303;
        }),
      ),
    );

  /** The uncounted hits of one limit and outcome, over both instances. */
  const uncounted = async (kind: string, outcome: string) => {
    let total = 0;
    for (const server of servers) {
      const body = (
        await request(server).get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`)
      ).text;
      total += sample(
        body,
        `tessera_rate_limit_uncounted_total{kind="${kind}",outcome="${outcome}"}`,
      );
    }
    return total;
  };

  /** Wrong passwords or codes checked for the account: its security log, once written. */
  const failedSignIns = async (userId: number, reason: string) => {
    for (const app of apps) await app.app.get(AuditLog).flush();
    const events = await t.dataSource
      .getRepository(AuditEvent)
      .findBy({ userId, event: 'sign-in.failed' });
    return events.filter(
      (e) => (JSON.parse(e.detail ?? '{}') as { reason?: string }).reason === reason,
    ).length;
  };

  const logLines = (pattern: RegExp) =>
    logs.flatMap((log) => log.entries).filter((e) => pattern.test(String(e.msg))).length;

  const unavailable = (res: request.Response) =>
    res.status === 503 &&
    res.headers['retry-after'] === '5' &&
    visibleText(res.text).includes('Tessera cannot count attempts right now');

  it('should have read Redis maxmemory-policy at start, on each instance', () => {
    expect(logLines(/^Redis maxmemory-policy is /)).toBe(2);
  });

  it('should check no two-factor code, not even the right one, while Redis resets connections, and count again once it is back', async () => {
    const person = await signedInPerson(t);
    const app = await turnOnTwoFactor(t, person);
    await atTheChallenge(person);
    const csrf = await person.client.csrfFrom(CHALLENGE);
    const browsers = person.client.onEach(servers);
    const right = app.code(1);
    const wrong = (i: number) => (String(100_000 + i) === right ? '999999' : String(100_000 + i));

    const refusedBefore = await uncounted('two-factor', 'refused');
    proxy.fail('reset');
    const during = await burst(40, servers, (i) =>
      browsers[i % 2].post(CHALLENGE, csrf, { code: i === 20 ? right : wrong(i) }),
    );
    expect(tally(during, (res) => (unavailable(res) ? 'unavailable' : String(res.status)))).toEqual(
      {
        unavailable: 40,
      },
    );
    expect(await failedSignIns(person.user.id, 'wrong two-factor code')).toBe(0);
    expect((await person.client.get('/dashboard')).status).toBe(303);
    // Two counters a code: per pending sign-in and per account.
    expect((await uncounted('two-factor', 'refused')) - refusedBefore).toBe(80);
    // Each instance said once that Redis was lost, however many hits failed.
    expect(logLines(/^Redis cannot count rate limits/)).toBe(2);

    proxy.heal();
    await countingAgain();
    expect(logLines(/^Redis answers again/)).toBe(2);
    // Nothing was counted while Redis was away: exactly the limit of wrong codes is checked now.
    const after = await burst(40, servers, (i) =>
      browsers[i % 2].post(CHALLENGE, csrf, { code: wrong(i) }),
    );
    expect(tally(after, (res) => String(res.status))).toEqual({ '303': 5, '429': 35 });
    expect(await failedSignIns(person.user.id, 'wrong two-factor code')).toBe(5);
  });

  it('should check no password while Redis is black-holed, answering every attempt, and count again once it is back', async () => {
    const email = uniqueEmail('blackhole');
    const user = await createUser(t.app, { email, password: PASSWORD });
    const client = new WebClient(t.server);
    const csrf = await client.csrfFrom('/login');
    const browsers = client.onEach(servers);
    const ip = clientIp();
    const signIn = (i: number, password: string) =>
      browsers[i % 2].agent
        .post('/login')
        .set('X-Forwarded-For', ip)
        .type('form')
        .send({ _csrf: csrf, email, password });
    const someone = await signedInPerson(t);
    const sudoCsrf = await someone.client.csrfFrom('/confirm-password');

    const [signInBefore, sudoBefore] = [
      await uncounted('sign-in', 'refused'),
      await uncounted('sudo', 'refused'),
    ];
    proxy.fail('black-hole');
    const during = await burst(30, servers, (i) => signIn(i, i === 15 ? PASSWORD : `wrong ${i}`));
    expect(tally(during, (res) => (unavailable(res) ? 'unavailable' : String(res.status)))).toEqual(
      {
        unavailable: 30,
      },
    );
    // A password typed again in sudo mode is not checked either.
    const sudo = await someone.client.post('/confirm-password', sudoCsrf, { password: 'guess' });
    expect(unavailable(sudo)).toBe(true);
    expect(await failedSignIns(user.id, 'wrong password')).toBe(0);
    expect(await failedSignIns(someone.user.id, 'wrong password confirmation')).toBe(0);
    // Three counters a password: per IP, per account, per account and IP.
    expect((await uncounted('sign-in', 'refused')) - signInBefore).toBe(90);
    expect((await uncounted('sudo', 'refused')) - sudoBefore).toBe(3);

    proxy.heal();
    await countingAgain();
    const after = await burst(30, servers, (i) => signIn(i, `wrong ${i}`));
    expect(tally(after, (res) => (res.status === 429 ? 'refused' : 'checked'))).toEqual({
      checked: 10,
      refused: 20,
    });
    expect(await failedSignIns(user.id, 'wrong password')).toBe(10);
  });

  it('should not hold against an address the attempts Redis ran late, after they were answered 503: its owner signs in once Redis answers again', async () => {
    const email = uniqueEmail('slow-redis');
    await createUser(t.app, { email, password: PASSWORD });
    const client = new WebClient(t.server);
    const csrf = await client.csrfFrom('/login');
    const browsers = client.onEach(servers);
    const ip = clientIp();
    // Redis too busy to read: what is sent to it now runs late, after the call timed out. The
    // right password, sent from one address more often than its limit (RATE_LIMIT_SIGN_IN), is
    // answered 503 unchecked.
    proxy.hold({ newConnections: true });
    const during = await burst(12, servers, (i) =>
      browsers[i % 2].agent
        .post('/login')
        .set('X-Forwarded-For', ip)
        .type('form')
        .send({ _csrf: csrf, email, password: PASSWORD }),
    );
    expect(tally(during, (res) => (unavailable(res) ? 'unavailable' : String(res.status)))).toEqual(
      { unavailable: 12 },
    );
    // Redis runs all twelve now; each instance gives them back once it answers again.
    await proxy.deliverHeld();
    await countingAgain();
    for (const app of apps)
      await (app.app.get(RateLimitStorage) as RedisRateLimitStorage).settled();
    const res = await client.agent
      .post('/login')
      .set('X-Forwarded-For', ip)
      .type('form')
      .send({ _csrf: await client.csrfFrom('/login'), email, password: PASSWORD });
    expect(`${res.status} ${res.headers.location}`).toBe('303 /dashboard');
  });

  it('should send no mail to an address a client names while Redis resets connections', async () => {
    const someone = await signedInPerson(t);
    const visitor = new WebClient(t.server);
    const newAddress = uniqueEmail('moved');
    const stranger = uniqueEmail('stranger');
    const profileCsrf = await someone.client.csrfFrom('/settings/profile');
    const resetCsrf = await visitor.csrfFrom('/forgot-password');
    const registerCsrf = await visitor.csrfFrom('/register');

    proxy.fail('reset');
    const answers = [
      await someone.client.post('/settings/profile', profileCsrf, {
        name: someone.user.name,
        email: newAddress,
      }),
      await visitor.post('/forgot-password', resetCsrf, { email: someone.email }),
      await visitor.post('/register', registerCsrf, {
        name: 'Stranger',
        email: stranger,
        password: PASSWORD,
        password_confirmation: PASSWORD,
      }),
    ];
    expect(answers.map(unavailable)).toEqual([true, true, true]);
    const outbox = t.dataSource.getRepository(OutboxMessage);
    expect(await outbox.countBy([{ recipient: newAddress }, { recipient: stranger }])).toBe(0);
    expect(await outbox.countBy({ recipient: someone.email, kind: 'password-reset' })).toBe(0);
    expect(await t.dataSource.getRepository(User).countBy({ email: stranger })).toBe(0);
  });

  it('should queue no webhook test event while Redis resets connections, and queue one once it is back', async () => {
    const someone = await signedInPerson(t);
    const team = await createTeam(t.app, someone.user, 'Outage Hooks');
    const { endpoint } = await t.app.get(WebhooksService).create(Actors.operator(), team.id, {
      url: 'http://127.0.0.1:9/hook',
      events: ['member.joined'],
    });
    const page = `/teams/${team.id}/webhooks/${endpoint.id}`;
    const csrf = await someone.client.csrfFrom(page);
    const testEvents = () =>
      t.dataSource
        .getRepository(WebhookDelivery)
        .countBy({ endpointId: endpoint.id, eventType: 'webhook.test' });

    proxy.fail('reset');
    const refusedBefore = await uncounted('webhook-tests', 'refused');
    const answers = await Promise.all(
      someone.client.onEach(servers).map((browser) => browser.post(`${page}/test`, csrf)),
    );
    expect(answers.map(unavailable)).toEqual([true, true]);
    expect((await uncounted('webhook-tests', 'refused')) - refusedBefore).toBe(2);
    expect(await testEvents()).toBe(0);

    proxy.heal();
    await countingAgain();
    const sent = await someone.client.post(`${page}/test`, csrf);
    expect(sent.status).toBe(303);
    expect(await testEvents()).toBe(1);
  });

  it('should keep answering API requests, uncounted, while Redis is black-holed, and count each token again once it is back', async () => {
    const owner = await createUser(t.app);
    const { plaintext } = await createToken(t.app, owner);
    const api = (server: Server) =>
      request(server)
        .get('/api/v1/user/profile')
        .set('X-Forwarded-For', clientIp())
        .set('Authorization', `Bearer ${plaintext}`);

    const allowedBefore = await uncounted('api-token', 'allowed');
    proxy.fail('black-hole');
    const during = await burst(20, servers, (_i, server) => api(server));
    expect(tally(during, (res) => String(res.status))).toEqual({ '200': 20 });
    expect((await uncounted('api-token', 'allowed')) - allowedBefore).toBe(20);

    proxy.heal();
    await countingAgain();
    const after = await burst(20, servers, (_i, server) => api(server));
    expect(tally(after, (res) => String(res.status))).toEqual({ '200': 10, '429': 10 });
  });
});
