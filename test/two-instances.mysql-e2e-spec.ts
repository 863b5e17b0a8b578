import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { createToken, createUser, uniqueEmail } from './factories/index.js';
import { PersonalAccessToken } from '../src/tokens/personal-access-token.entity.js';
import { TokenExpiryReminders } from '../src/tokens/token-expiry-reminders.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';
import { WebClient } from './support/web-client.js';
import { TestSmtpServer } from './support/smtp-server.js';
import { sleep, waitFor } from './support/wait-for.js';
import { Transactions } from '../src/database/transactions.js';
import { Mailer } from '../src/mail/mailer.js';
import { OutboxMessage } from '../src/mail/outbox-message.entity.js';
import { OutboxSender } from '../src/mail/outbox-sender.js';
import { AuditLog } from '../src/audit/audit-log.js';
import { AuditEvent } from '../src/audit/audit-event.entity.js';
import { TokenUsageRecorder } from '../src/tokens/token-usage-recorder.js';

/** Two instances on one MySQL/MariaDB database (runs with TEST_DATABASE_URL). */
describe('two instances', () => {
  let db: TestDatabase;
  let smtp: TestSmtpServer;
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    smtp = await TestSmtpServer.start();
    const env = { SESSION_SECRET: 'one secret shared by every instance of this deployment' };
    a = await createTestApp(env, { database: db, mail: smtp });
    b = await createTestApp(env, { database: db, mail: smtp });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await smtp?.stop();
    await db?.drop();
  });

  it('should refuse on B a token revoked through A, on the very next request', async () => {
    const client = new WebClient(a.server, smtp);
    await client.register('Two Places', uniqueEmail('two'));
    const { value: token, id } = await client.createTokenOnPage({
      name: 'shared',
      abilities: 'user:read',
    });
    const onB = () =>
      request(b.server).get('/api/v1/user/profile').set('Authorization', `Bearer ${token}`);
    expect((await onB()).status).toBe(200);

    await client.submit('/settings/api-tokens', `/settings/api-tokens/${id}/revoke`);

    const next = await onB();
    expect(next.status).toBe(401);
    expect(next.body.error.code).toBe('token_revoked');
  });

  it('should end on B a session signed out on A', async () => {
    const client = new WebClient(a.server, smtp);
    const registered = await client.register('Signed Out', uniqueEmail('out'));
    const cookie = client.sessionCookie(registered)!;
    expect((await request(b.server).get('/dashboard').set('Cookie', cookie)).status).toBe(200);

    await client.submit('/dashboard', '/logout');

    const after = await request(b.server).get('/dashboard').set('Cookie', cookie);
    expect(after.status).toBe(303);
    expect(after.headers.location).toBe('/login?session_ended=1');
  });

  it('should send each message of the outbox once when both instances deliver at the same time', async () => {
    const sentBy: Record<string, string[]> = { a: [], b: [] };
    for (const [name, app] of [
      ['a', a],
      ['b', b],
    ] as const) {
      app.app.get(Mailer).composeWith('test-note', async (_m, { to }) => {
        sentBy[name].push(to);
        return { to, subject: 'Both instances', text: to, html: `<p>${to}</p>` };
      });
    }
    const recipients = Array.from({ length: 60 }, () => uniqueEmail('once'));
    await a.app.get(Transactions).run(async (m) => {
      for (const to of recipients) await a.app.get(Mailer).send(m, 'test-note', to);
    });
    // A was woken by its commit; B is woken as its timer would.
    b.app.get(OutboxSender).wake();

    await smtp.waitForCount({ subject: 'Both instances' }, recipients.length);
    await sleep(500);
    const received = smtp.find({ subject: 'Both instances' }).flatMap((mail) => mail.to);
    expect(received.sort()).toEqual([...recipients].sort());
    expect([...sentBy.a, ...sentBy.b].sort()).toEqual([...recipients].sort());
    // Both took part.
    expect(sentBy.a.length).toBeGreaterThan(0);
    expect(sentBy.b.length).toBeGreaterThan(0);
    const rows = await a.dataSource.getRepository(OutboxMessage).findBy({ kind: 'test-note' });
    expect(rows.map((r) => [r.status, r.attempts, r.claimedBy])).toEqual(
      recipients.map(() => ['sent', 1, null]),
    );
  });

  it('should send each expiry reminder once when both instances look for them at the same moment', async () => {
    const owners = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        createUser(a.app, { name: `Expiring ${i}`, email: uniqueEmail('expiring') }),
      ),
    );
    const tokens = a.dataSource.getRepository(PersonalAccessToken);
    for (const owner of owners) {
      const { token } = await createToken(a.app, owner, { name: 'soon', expiresInDays: 30 });
      // Three days left of 30: the week's reminder is due.
      const expiresAt = new Date(Date.now() + 3 * 86_400_000);
      await tokens.update(
        { id: token.id },
        { expiresAt, createdAt: new Date(expiresAt.getTime() - 30 * 86_400_000) },
      );
    }
    const runs = await Promise.all([
      a.app.get(TokenExpiryReminders).run(),
      b.app.get(TokenExpiryReminders).run(),
      a.app.get(TokenExpiryReminders).run(),
      b.app.get(TokenExpiryReminders).run(),
    ]);
    expect(runs.reduce((n, r) => n + r.reminded, 0)).toBe(owners.length);
    const emails = owners.map((o) => o.email);
    const reminders = () =>
      smtp.find({ subject: 'Your API token "soon" expires in 3 days' }).flatMap((m) => m.to);
    await waitFor(() => reminders().length >= owners.length, {
      message: 'not every reminder arrived',
    });
    b.app.get(OutboxSender).wake();
    await sleep(500);
    expect(reminders().sort()).toEqual([...emails].sort());
  });

  it("should log a token's first use from an address once when both instances write it at the same moment", async () => {
    const owner = await createUser(a.app, { name: 'Busy Owner', email: uniqueEmail('busy') });
    const tokens = await Promise.all(
      Array.from({ length: 10 }, (_, i) => createToken(a.app, owner, { name: `ci ${i}` })),
    );
    // Each token used on both instances from the same address, which neither has recorded.
    for (const { plaintext } of tokens) {
      for (const app of [a, b]) {
        const res = await request(app.server)
          .get('/api/v1/user/profile')
          .set('Authorization', `Bearer ${plaintext}`);
        expect(res.status).toBe(200);
      }
    }
    await Promise.all([
      a.app.get(TokenUsageRecorder).flush(),
      b.app.get(TokenUsageRecorder).flush(),
    ]);
    await a.app.get(AuditLog).flush();
    await b.app.get(AuditLog).flush();
    const logged = await a.dataSource.getRepository(AuditEvent).findBy({ event: 'token.new_ip' });
    const ours = logged.filter((e) => tokens.some((t) => t.token.id === e.tokenId));
    expect(ours.map((e) => e.tokenId).sort((x, y) => x! - y!)).toEqual(
      tokens.map((t) => t.token.id).sort((x, y) => x - y),
    );
  });
});
