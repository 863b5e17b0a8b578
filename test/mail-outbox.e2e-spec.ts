import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { simpleParser } from 'mailparser';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { In, type DataSource } from 'typeorm';
import { loadConfig } from '../src/config/config.js';
import { dataSourceFor } from '../src/entities.js';
import { Transactions } from '../src/database/transactions.js';
import { Mailer } from '../src/mail/mailer.js';
import { OutboxMessage } from '../src/mail/outbox-message.entity.js';
import { uniqueEmail } from './factories/index.js';
import { LogCapture } from './support/log-capture.js';
import { TestSmtpServer } from './support/smtp-server.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { createTestDatabase } from './support/test-database.js';
import { sleep, waitFor } from './support/wait-for.js';
import { WebClient } from './support/web-client.js';

const METRICS_TOKEN = 'mail-metrics-secret-0123456789-abcdef';

describe('mail outbox', () => {
  let t: TestApp;
  const logs = new LogCapture();

  beforeAll(async () => {
    t = await createTestApp(
      {
        RATE_LIMIT_ENABLED: 'false',
        MAIL_MAX_ATTEMPTS: '3',
        // No look at the outbox on a timer within a test's time: a message that arrives was
        // sent because its commit woke the sender (retries keep timers of their own).
        MAIL_POLL_SECONDS: '3600',
        METRICS_ENABLED: 'true',
        METRICS_TOKEN,
        LOG_LEVEL: 'verbose',
      },
      { logs },
    );
    // A kind of message for these specs alone, so they test delivery rather than a feature.
    t.app.get(Mailer).composeWith('test-note', async (_manager, { to, params }) => ({
      to,
      subject: `Note ${String(params.n)}`,
      text: `Note ${String(params.n)}`,
      html: `<p>Note ${String(params.n)}</p>`,
    }));
  });
  afterAll(async () => {
    await t.close();
  });

  const rows = () => t.dataSource.getRepository(OutboxMessage);
  /** The sender's log lines, for a failure's message. */
  const mailLines = () =>
    logs.entries
      .filter((e) => e.context === 'Mail' || e.context === 'Scheduler')
      .map((e) => `${String(e.time)} ${String(e.msg)}`)
      .join('\n');
  const enqueue = (to: string, n: number) =>
    t.app.get(Transactions).run((m) => t.app.get(Mailer).send(m, 'test-note', to, { n }));
  const metric = async (outcome: string): Promise<number> => {
    const res = await request(t.server)
      .get('/metrics')
      .set('Authorization', `Bearer ${METRICS_TOKEN}`);
    const line = new RegExp(`^tessera_mail_messages_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm');
    return Number(line.exec(res.text)?.[1]);
  };

  it('should store nothing and send nothing when the change that asked for mail rolls back', async () => {
    const to = uniqueEmail('rolled-back');
    await expect(
      t.app.get(Transactions).run(async (m) => {
        await t.app.get(Mailer).send(m, 'test-note', to, { n: 1 });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    await enqueue(uniqueEmail('after'), 2);
    await t.mail.waitFor({ subject: 'Note 2' });
    expect(await rows().countBy({ recipient: to })).toBe(0);
    expect(t.mail.find({ to })).toEqual([]);
  });

  it('should send right after the commit, and record it as sent', async () => {
    const to = uniqueEmail('prompt');
    await enqueue(to, 3);
    // Nothing but the commit wakes the sender before the next look, an hour away.
    const mail = await t.mail.waitFor({ to });
    expect(mail.from).toBe('no-reply@localhost');
    expect(mail.subject).toBe('Note 3');
    await waitFor(async () => (await rows().findOneByOrFail({ recipient: to })).status === 'sent');
    const row = await rows().findOneByOrFail({ recipient: to });
    expect(row).toMatchObject({
      attempts: 1,
      claimedBy: null,
      claimedUntil: null,
      lastError: null,
    });
    expect(row.sentAt).not.toBeNull();
  });

  it('should deliver exactly once a message asked for while the mail server was down, once it is back', async () => {
    const sentBefore = await metric('sent');
    await t.mail.stop();
    const email = uniqueEmail('outage');
    const client = new WebClient(t.server, t.mail);
    await client.register('Patient Person', email, 'correct horse battery', { confirm: false });

    // The first try failed at once; the message waits for its retry, about a second later.
    await waitFor(async () => (await rows().findOneBy({ recipient: email }))?.lastError != null);
    const waiting = await rows().findOneByOrFail({ recipient: email });
    expect(waiting).toMatchObject({ status: 'pending', kind: 'verify-email', claimedBy: null });
    expect(waiting.lastError).toMatch(/ECONNREFUSED/);
    expect(waiting.nextAttemptAt.getTime() - Date.now()).toBeLessThan(30_000);
    expect(await metric('retried')).toBeGreaterThanOrEqual(1);

    await t.mail.listen();
    const mail = await t.mail.waitFor({ to: email });
    expect(mail.subject).toBe('Confirm your email address');
    await sleep(2_500);
    expect(t.mail.find({ to: email })).toHaveLength(1);
    const sent = await rows().findOneByOrFail({ recipient: email });
    expect(sent.status).toBe('sent');
    expect(sent.attempts).toBeGreaterThanOrEqual(2);
    expect(await metric('sent')).toBe(sentBefore + 1);

    // And the link in it works.
    await client.confirmEmail(email);
    expect(
      (await t.dataSource.query('SELECT email_verified_at FROM users WHERE email = ?', [email]))[0]
        .email_verified_at,
    ).not.toBeNull();
  });

  it('should mark a message failed after its last try, count it and say so in the log', async () => {
    const failedBefore = await metric('failed');
    t.mail.refuseWith(550, 'No such mailbox here');
    try {
      const to = uniqueEmail('bounce');
      await enqueue(to, 4);
      // MAIL_MAX_ATTEMPTS=3: now, a second later, two seconds after that.
      let last: OutboxMessage | undefined;
      await waitFor(
        async () => (last = await rows().findOneByOrFail({ recipient: to })).status === 'failed',
        // What the row and the sender said, should it never come to that.
        { message: () => `the message is still ${JSON.stringify(last)}\n${mailLines()}` },
      );
      const row = await rows().findOneByOrFail({ recipient: to });
      expect(row).toMatchObject({ attempts: 3, claimedBy: null, sentAt: null });
      expect(row.lastError).toMatch(/550 No such mailbox here/);
      expect(await metric('failed')).toBe(failedBefore + 1);
      expect(logs.text).toMatch(/Gave up on test-note message \d+ after 3 attempts/);
    } finally {
      t.mail.accept();
    }
  });

  it('should send a message another instance held when it stopped as soon as its lease ends, not at the next look on a timer', async () => {
    const to = uniqueEmail('orphan');
    // Claimed by an instance that stopped mid-send: its lease runs out in two seconds.
    await rows().insert({
      kind: 'test-note',
      recipient: to,
      params: JSON.stringify({ n: 5 }),
      status: 'pending',
      attempts: 1,
      nextAttemptAt: new Date(Date.now() - 60_000),
      claimedBy: 'an instance that stopped',
      claimedUntil: new Date(Date.now() + 2_000),
    });
    // Another message wakes the sender; the held one is not its to take yet.
    const other = uniqueEmail('wakes-the-sender');
    await enqueue(other, 6);
    await t.mail.waitFor({ to: other });
    expect(t.mail.find({ to })).toEqual([]);

    // The sender's next look is at the lease's end (its timer is an hour otherwise).
    const mail = await t.mail.waitFor({ to });
    expect(mail.subject).toBe('Note 5');
    await waitFor(async () => (await rows().findOneByOrFail({ recipient: to })).status === 'sent');
    expect(await rows().findOneByOrFail({ recipient: to })).toMatchObject({
      attempts: 2,
      claimedBy: null,
    });
  });

  it('should let the message being sent finish at shutdown and hand back the rest, untried', async () => {
    const db = await createTestDatabase({ file: true });
    const smtp = await TestSmtpServer.start();
    const withNotes = async () => {
      const app = await createTestApp({}, { database: db, mail: smtp });
      app.app.get(Mailer).composeWith('test-note', async (_m, { to }) => ({
        to,
        subject: 'Slow note',
        text: 'slow',
        html: '<p>slow</p>',
      }));
      return app;
    };
    const first = await withNotes();
    let reader: DataSource | undefined;
    let second: TestApp | undefined;
    const recipients = [1, 2, 3].map(() => uniqueEmail('shutdown'));
    const stored = async () => {
      const found = await reader!
        .getRepository(OutboxMessage)
        .findBy({ recipient: In(recipients) });
      return recipients.map((recipient) => found.find((r) => r.recipient === recipient)!);
    };
    try {
      smtp.slowDown(700);
      await first.app.get(Transactions).run(async (m) => {
        for (const to of recipients) {
          await first.app.get(Mailer).send(m, 'test-note', to);
        }
      });
      await sleep(300);
      await first.close();

      reader = await dataSourceFor(loadConfig({ DATABASE_URL: db.url }).database).initialize();
      expect((await stored()).map((r) => [r.status, r.attempts, r.claimedBy])).toEqual([
        ['sent', 1, null],
        ['pending', 0, null],
        ['pending', 0, null],
      ]);

      // The next instance to start takes what the stopped one handed back.
      smtp.slowDown(0);
      second = await withNotes();
      await waitFor(async () => (await stored()).every((r) => r.status === 'sent'));
      expect(
        smtp
          .find({ subject: 'Slow note' })
          .flatMap((m) => m.to)
          .sort(),
      ).toEqual([...recipients].sort());
    } finally {
      await reader?.destroy();
      await second?.close();
      await smtp.stop();
      await db.drop();
    }
  });
});

/** The messages written whole (a message being written has a hidden name of its own). */
const messagesIn = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.eml'));

describe('mail without an SMTP server', () => {
  it('should write each message to an .eml file and log its links outside production only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-mail-'));
    const logs = new LogCapture();
    const outside = await createTestApp(
      { MAIL_URL: '', MAIL_DIR: dir, LOG_LEVEL: 'log', LOG_FORMAT: 'json' },
      { logs },
    );
    try {
      const email = uniqueEmail('files');
      await new WebClient(outside.server).submit('/register', '/register', {
        name: 'File Reader',
        email,
        password: 'correct horse battery',
        password_confirmation: 'correct horse battery',
      });
      await waitFor(async () => messagesIn(dir).length === 1);
      const [file] = messagesIn(dir);
      expect(file).toMatch(/\.eml$/);
      const eml = await simpleParser(readFileSync(join(dir, file)));
      expect(eml.subject).toBe('Confirm your email address');
      expect(eml.headers.get('to')).toMatchObject({ text: email });
      const link = /http:\/\/localhost:\d+\/verify-email\/[A-Za-z0-9_-]{43}/.exec(eml.text!)![0];
      const line = logs.entries.find((e) => String(e.msg).includes('.eml'))!;
      expect(line.msg).toBe(
        `"Confirm your email address" written to ${join(dir, file)}; links: ${link} ${outside.config.app.publicUrl}`,
      );
    } finally {
      await outside.close();
    }

    const prodDir = mkdtempSync(join(tmpdir(), 'tessera-mail-'));
    const prodLogs = new LogCapture();
    const production = await createTestApp(
      {
        NODE_ENV: 'production',
        SESSION_SECRET: 'a production secret with enough entropy: 7f3kQ9zX2mWv',
        EMAIL_VERIFICATION: 'off',
        MAIL_URL: '',
        MAIL_DIR: prodDir,
        LOG_LEVEL: 'log',
      },
      { logs: prodLogs },
    );
    try {
      const client = new WebClient(production.server);
      const email = uniqueEmail('quiet');
      await client.register('Quiet Person', email);
      await client.submit('/forgot-password', '/forgot-password', { email });
      await waitFor(async () => messagesIn(prodDir).length === 1);
      const eml = await simpleParser(readFileSync(join(prodDir, messagesIn(prodDir)[0])));
      expect(eml.text).toMatch(/reset-password\/[A-Za-z0-9_-]{43}/);
      expect(prodLogs.entries.map((e) => e.msg)).toContainEqual(
        expect.stringMatching(/^"Reset your Tessera password" written to \S+\.eml$/),
      );
      expect(prodLogs.text).not.toMatch(/reset-password\/[A-Za-z0-9_-]{43}/);
    } finally {
      await production.close();
      rmSync(dir, { recursive: true, force: true });
      rmSync(prodDir, { recursive: true, force: true });
    }
  });
});
