import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { Transactions } from '../src/database/transactions.js';
import { Mailer } from '../src/mail/mailer.js';
import { OutboxMessage } from '../src/mail/outbox-message.entity.js';
import { Scheduler } from '../src/scheduler/scheduler.js';
import { createToken, createUser, uniqueEmail } from './factories/index.js';
import { LogCapture } from './support/log-capture.js';
import { OpenApiContract } from './support/openapi-contract.js';
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
