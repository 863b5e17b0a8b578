import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import mysql from 'mysql2/promise';
import request from 'supertest';
import { AuditEvent } from '../src/audit/audit-event.entity.js';
import { AuditLog } from '../src/audit/audit-log.js';
import { Transactions } from '../src/database/transactions.js';
import { Mailer } from '../src/mail/mailer.js';
import { OutboxMessage } from '../src/mail/outbox-message.entity.js';
import { Scheduler } from '../src/scheduler/scheduler.js';
import { PersonalAccessToken } from '../src/tokens/personal-access-token.entity.js';
import { User } from '../src/users/user.entity.js';
import { createToken, createUser, uniqueEmail } from './factories/index.js';
import { burst } from './support/burst.js';
import { LogCapture } from './support/log-capture.js';
import { OpenApiContract } from './support/openapi-contract.js';
import { signedInPerson, type SignedInPerson } from './support/people.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';
import { waitFor } from './support/wait-for.js';

/**
 * An unreachable database is a network condition, so the app reaches its database server
 * through a TCP proxy the test can cut. Runs only with TEST_DATABASE_URL (see jest.config.js):
 * embedded SQLite has no connection to lose.
 */
describe('database outage', () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  let t: TestApp;
  let token: string;
  const logs = new LogCapture();

  beforeAll(async () => {
    db = await createTestDatabase();
    const url = new URL(db.url);
    proxy = await new TcpProxy(url.hostname, Number(url.port || 3306)).start();
    url.host = `127.0.0.1:${proxy.port}`;
    t = await createTestApp(
      // Queries and connections wait ten minutes before they give up: a 503 that comes at all
      // came from the refused connection, not from a timeout.
      { RATE_LIMIT_ENABLED: 'false', DB_QUERY_TIMEOUT_MS: '600000', LOG_LEVEL: 'warn' },
      { database: { ...db, url: url.toString() }, logs },
    );
    t.app.get(Mailer).composeWith('test-note', async (_m, { to }) => ({
      to,
      subject: 'A note',
      text: 'A note',
      html: '<p>A note</p>',
    }));
    token = (await createToken(t.app, await createUser(t.app))).plaintext;
  });

  afterAll(async () => {
    await t.close();
    await proxy.stop();
    await db.drop();
  });

  const get = async (path: string, auth = true) => {
    const req = request(t.server).get(path);
    return { res: await (auth ? req.set('Authorization', `Bearer ${token}`) : req) };
  };

  it('should answer 503 while the database is cut off, without waiting for a timeout, and recover without a restart', async () => {
    expect((await get('/api/v1/user/profile')).res.status).toBe(200);
    const contract = await OpenApiContract.fetch(t.server);

    await proxy.cut();
    for (const path of ['/api/v1/user/profile', '/api/v1/team']) {
      const { res } = await get(path);
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.body).toMatchObject({ success: false, error: { code: 'service_unavailable' } });
      expect(JSON.stringify(res.body)).not.toMatch(/ECONN|127\.0\.0\.1|SELECT/);
      contract.expectMatches('GET', path, res);
    }
    const ready = await get('/health/ready', false);
    expect(ready.res.status).toBe(503);
    expect((await get('/health/live', false)).res.status).toBe(200);

    await proxy.restore();
    let status = 0;
    await waitFor(
      async () => {
        status = (await get('/api/v1/user/profile')).res.status;
        return status === 200;
      },
      { intervalMs: 100 },
    );
    expect(status).toBe(200);
    expect((await get('/health/ready', false)).res.status).toBe(200);
  });

  it('should send a message whose retry fell due while the database was cut off, once it is back', async () => {
    const to = uniqueEmail('retry-in-outage');
    const row = () => t.dataSource.getRepository(OutboxMessage).findOneByOrFail({ recipient: to });
    t.mail.refuseWith(451, 'Try again later');
    await t.app.get(Transactions).run((m) => t.app.get(Mailer).send(m, 'test-note', to));
    // Refused once, and that round over: the retry is a second away (MAIL_RETRY_SECONDS=1), the
    // sender's own look at the outbox an hour away.
    await waitFor(async () => (await row()).lastError != null);
    await t.app.get(Scheduler).drain();

    await proxy.cut();
    await waitFor(() => /Could not read the outbox/.test(logs.text));
    t.mail.accept();
    await proxy.restore();

    const mail = await t.mail.waitFor({ to });
    expect(mail.subject).toBe('A note');
    await waitFor(async () => (await row()).status === 'sent');
    expect(t.mail.find({ to })).toHaveLength(1);
  });
});

/**
 * Faults where the database does not refuse but stops answering, or resets every connection,
 * and a row lock held by someone else: the app answers each request with a 503 (never a hang,
 * never a 500) and serves again by itself afterwards. A small pool, so that a few stuck
 * connections would be all of them; the query timeout is generous for a busy machine, and
 * nothing here measures how long an answer took: a hang is what the test timeout catches.
 */
describe('database faults', () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  let t: TestApp;
  let token: string;
  let person: SignedInPerson;
  const logs = new LogCapture();

  beforeAll(async () => {
    db = await createTestDatabase();
    const url = new URL(db.url);
    proxy = await new TcpProxy(url.hostname, Number(url.port || 3306)).start();
    url.host = `127.0.0.1:${proxy.port}`;
    t = await createTestApp(
      {
        RATE_LIMIT_ENABLED: 'false',
        DB_QUERY_TIMEOUT_MS: '3000',
        DB_POOL_SIZE: '2',
        DB_LIVENESS_STALL_MS: '1000',
        LOG_LEVEL: 'warn',
      },
      { database: { ...db, url: url.toString() }, logs },
    );
    t.app.get(Mailer).composeWith('test-note', async (_m, { to }) => ({
      to,
      subject: 'A note',
      text: 'A note',
      html: '<p>A note</p>',
    }));
    token = (await createToken(t.app, await createUser(t.app))).plaintext;
    person = await signedInPerson(t);
  });

  afterAll(async () => {
    proxy.heal();
    await t.close();
    await proxy.stop();
    await db.drop();
  });

  const api = () =>
    request(t.server).get('/api/v1/user/profile').set('Authorization', `Bearer ${token}`);
  const page = () => person.client.get('/settings/profile');
  const live = () => request(t.server).get('/health/live');

  /** A 503 that came, saying when to try again: in the API's envelope, or as a page. */
  function expectUnavailable(res: request.Response, kind: 'api' | 'page'): void {
    expect(res.status).toBe(503);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    if (kind === 'api') {
      expect(res.body).toMatchObject({ success: false, error: { code: 'service_unavailable' } });
    } else {
      expect(res.text).toContain('Tessera is not available right now');
    }
  }

  /** The API, a page and the health check answer as usual again. */
  async function expectServing(): Promise<void> {
    await waitFor(async () => (await api()).status === 200, { intervalMs: 100 });
    await waitFor(async () => (await page()).status === 200, { intervalMs: 100 });
    expect((await live()).status).toBe(200);
  }

  /**
   * A message the mail server refuses until the fault is under way, so that a retry of it falls
   * due during the fault (the next look at the outbox fails), then sent once all is well.
   */
  async function mailDuringFault(fault: () => void, heal: () => Promise<void>): Promise<void> {
    const to = uniqueEmail('mail-in-fault');
    t.mail.refuseWith(451, 'Try again later');
    await t.app.get(Transactions).run((m) => t.app.get(Mailer).send(m, 'test-note', to));
    const row = () => t.dataSource.getRepository(OutboxMessage).findOneByOrFail({ recipient: to });
    await waitFor(async () => (await row()).lastError != null);
    const seen = logs.lines.length;
    fault();
    await waitFor(() => logs.lines.slice(seen).some((l) => /Could not read the outbox/.test(l)));
    t.mail.accept();
    await heal();
    expect((await t.mail.waitFor({ to })).subject).toBe('A note');
  }

  it('should answer 503 while the database answers nothing (a black hole), fail liveness while wedged, and serve the API, pages and mail again by itself', async () => {
    await expectServing();
    const [{ id: sessionId }] = await t.dataSource.query(
      'SELECT id FROM sessions WHERE user_id = ?',
      [person.user.id],
    );
    // What TypeORM would print of its own, beside the app's log.
    const printed: string[] = [];
    const print = (...parts: unknown[]) => void printed.push(parts.map(String).join(' '));
    const spies = (['log', 'info', 'warn', 'error'] as const).map((level) =>
      jest.spyOn(console, level).mockImplementation(print),
    );
    try {
      await mailDuringFault(
        () => proxy.fail('black-hole'),
        async () => {
          for (let i = 0; i < 3; i++) {
            expectUnavailable(await api(), 'api');
            expectUnavailable(await page(), 'page');
          }
          await waitFor(async () => (await live()).status === 503, { intervalMs: 100 });
          proxy.heal();
        },
      );
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    await expectServing();
    // A statement that hit the timeout may be logged as slow: in the log, never with its values.
    expect(logs.text).not.toContain(sessionId);
    expect(logs.text).not.toContain('PARAMETERS');
    expect(printed).toEqual([]);
  });

  it('should answer 503 while every connection to the database is reset, and serve again by itself', async () => {
    await expectServing();
    await mailDuringFault(
      () => proxy.fail('reset'),
      async () => {
        for (let i = 0; i < 3; i++) {
          expectUnavailable(await api(), 'api');
          expectUnavailable(await page(), 'page');
        }
        // A database that refuses is down, not wedged: a restart would not help.
        expect((await live()).status).toBe(200);
        proxy.heal();
      },
    );
    await expectServing();
  });

  it('should keep a change whose commit was answered to no one together with its security log entry', async () => {
    const csrf = await person.client.csrfFrom('/settings/api-tokens');
    // The answer to the commit of the transaction that inserts the token, and to no other.
    proxy.loseCommitAnswerAfter('INSERT INTO `personal_access_tokens`');
    const res = await person.client.post('/settings/api-tokens', csrf, {
      name: 'made unseen',
      abilities: 'user:read',
      expires_in_days: '30',
    });
    // The change was made, but its request cannot know: it answers that it could not tell.
    expectUnavailable(res, 'page');
    await t.app.get(AuditLog).flush();
    const made = await t.dataSource
      .getRepository(PersonalAccessToken)
      .findBy({ userId: person.user.id, name: 'made unseen' });
    expect(made).toHaveLength(1);
    const entries = await t.dataSource
      .getRepository(AuditEvent)
      .findBy({ event: 'token.created', tokenId: made[0].id });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ userId: person.user.id, actorKind: 'user' });
    await expectServing();
  });

  it('should answer 503 to requests that wait on a row locked elsewhere, and leave the pool to an unrelated call while the lock is still held', async () => {
    const other = await mysql.createConnection(db.url);
    try {
      await other.query('START TRANSACTION');
      await other.query('SELECT id FROM users WHERE id = ? FOR UPDATE', [person.user.id]);
      const csrf = await person.client.csrfFrom('/settings/profile');
      // More changes of the locked row than the pool has connections, all at once.
      const answers = await burst(30, t.server, () =>
        person.client.agent
          .post('/settings/profile')
          .type('form')
          .send({ name: 'Renamed', email: person.email, _csrf: csrf }),
      );
      for (const res of answers) expectUnavailable(res, 'page');
      expect((await api()).status).toBe(200);
      expect((await live()).status).toBe(200);
    } finally {
      await other.end();
    }
    const renamed = await person.client.submit('/settings/profile', '/settings/profile', {
      name: 'Renamed',
      email: person.email,
    });
    expect(renamed.status).toBe(303);
    const user = await t.dataSource.getRepository(User).findOneByOrFail({ id: person.user.id });
    expect(user.name).toBe('Renamed');
  });
});
