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
import { OutboxSender } from '../src/mail/outbox-sender.js';
import { retryDelayMs } from '../src/mail/retry-delay.js';
import { uniqueEmail } from './factories/index.js';
import { LogCapture } from './support/log-capture.js';
import { TestSmtpServer } from './support/smtp-server.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { createTestDatabase } from './support/test-database.js';
import { WAIT_TIMEOUT_MS, waitFor } from './support/wait-for.js';
import { WebClient } from './support/web-client.js';

const METRICS_TOKEN = 'mail-metrics-secret-0123456789-abcdef';

/** The app these specs send from, with a kind of message for them alone. */
async function startApp(env: Record<string, string>, logs: LogCapture): Promise<TestApp> {
  const t = await createTestApp(
    {
      RATE_LIMIT_ENABLED: 'false',
      // No look at the outbox on a timer within a test's time: a message that arrives was
      // sent because its commit woke the sender (retries keep timers of their own).
      MAIL_POLL_SECONDS: '3600',
      METRICS_ENABLED: 'true',
      METRICS_TOKEN,
      LOG_LEVEL: 'verbose',
      ...env,
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
  return t;
}

const rowsOf = (t: TestApp) => t.dataSource.getRepository(OutboxMessage);
const enqueueIn = (t: TestApp, to: string, n: number) =>
  t.app.get(Transactions).run((m) => t.app.get(Mailer).send(m, 'test-note', to, { n }));
const metricOf = async (t: TestApp, outcome: string): Promise<number> => {
  const res = await request(t.server)
    .get('/metrics')
    .set('Authorization', `Bearer ${METRICS_TOKEN}`);
  const line = new RegExp(`^tessera_mail_messages_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm');
  return Number(line.exec(res.text)?.[1]);
};

describe('mail outbox', () => {
  let t: TestApp;
  const logs = new LogCapture();

  beforeAll(async () => {
    // Enough tries that a message asked for while the mail server is down is still waiting
    // when it comes back, however long a busy machine takes to get there (a refused message's
    // last try has an app of its own below).
    t = await startApp({ MAIL_MAX_ATTEMPTS: '20' }, logs);
  });
  afterAll(async () => {
    await t.close();
  });

  const rows = () => rowsOf(t);
  const enqueue = (to: string, n: number) => enqueueIn(t, to, n);
  const metric = (outcome: string) => metricOf(t, outcome);

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
    try {
      await client.register('Patient Person', email, 'correct horse battery', {
        confirm: false,
      });

      // The first try failed at once; the message waits for its retry. Read between two tries:
      // a retry that holds the message while the test looks is not the state asked about.
      let waiting: OutboxMessage | null = null;
      await waitFor(async () => {
        waiting = await rows().findOneBy({ recipient: email });
        return waiting?.lastError != null && waiting.claimedBy === null;
      });
      const seen = waiting!;
      expect(seen).toMatchObject({ status: 'pending', kind: 'verify-email', claimedBy: null });
      expect(seen.lastError).toMatch(/ECONNREFUSED/);
      // Retried soon: within the back-off its failed tries have earned, a second at first.
      expect(seen.nextAttemptAt.getTime() - Date.now()).toBeLessThanOrEqual(
        retryDelayMs(seen.attempts, t.config.mail.retrySeconds * 1000),
      );
      await waitFor(async () => (await metric('retried')) >= 1);
    } finally {
      // Whatever failed above, the next tests have their mail server back.
      await t.mail.listen();
    }

    // The next try comes at the back-off's pace: the longer the machine took to get here, the
    // longer it may be (a guard against a hang, not a measure of speed).
    const mail = await t.mail.waitFor({ to: email }, 5 * WAIT_TIMEOUT_MS);
    expect(mail.subject).toBe('Confirm your email address');
    await waitFor(
      async () => (await rows().findOneByOrFail({ recipient: email })).status === 'sent',
    );
    const sent = await rows().findOneByOrFail({ recipient: email });
    expect(sent.attempts).toBeGreaterThanOrEqual(2);
    // Counted (at least this one: another test's message may be counted after sentBefore was read).
    await waitFor(async () => (await metric('sent')) >= sentBefore + 1);
    // Sent is final: nothing claims the message again, and it arrived once.
    expect(t.mail.find({ to: email })).toHaveLength(1);

    // And the link in it works.
    await client.confirmEmail(email);
    expect(
      (await t.dataSource.query('SELECT email_verified_at FROM users WHERE email = ?', [email]))[0]
        .email_verified_at,
    ).not.toBeNull();
  });

  it('should send a message another instance held when it stopped as soon as its lease ends, not at the next look on a timer', async () => {
    const to = uniqueEmail('orphan');
    // Claimed by an instance that stopped mid-send: its lease runs out in two seconds.
    const leaseEnd = new Date(Date.now() + 2_000);
    await rows().insert({
      kind: 'test-note',
      recipient: to,
      params: JSON.stringify({ n: 5 }),
      status: 'pending',
      attempts: 1,
      nextAttemptAt: new Date(Date.now() - 60_000),
      claimedBy: 'an instance that stopped',
      claimedUntil: leaseEnd,
    });
    // Another message wakes the sender; the held one is not its to take before the lease ends.
    const other = uniqueEmail('wakes-the-sender');
    await enqueue(other, 6);
    await t.mail.waitFor({ to: other });

    // The sender's next look is at the lease's end (its timer is an hour otherwise).
    const mail = await t.mail.waitFor({ to });
    expect(mail.subject).toBe('Note 5');
    await waitFor(async () => (await rows().findOneByOrFail({ recipient: to })).status === 'sent');
    const sent = await rows().findOneByOrFail({ recipient: to });
    expect(sent).toMatchObject({ attempts: 2, claimedBy: null });
    // Taken only once the lease had ended, however slow the machine made the rest.
    expect(sent.sentAt!.getTime()).toBeGreaterThanOrEqual(leaseEnd.getTime());
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
      // The server holds its answer to the first message until the app is stopping.
      const release = smtp.hold();
      await first.app.get(Transactions).run(async (m) => {
        for (const to of recipients) {
          await first.app.get(Mailer).send(m, 'test-note', to);
        }
      });
      await waitFor(() => smtp.receiving === 1);
      const closing = first.close();
      const sender = first.app.get(OutboxSender);
      // The sender stops taking messages as the app closes (its private flag is the state).
      await waitFor(() => sender['stopped']);
      release();
      await closing;

      reader = await dataSourceFor(loadConfig({ DATABASE_URL: db.url }).database).initialize();
      expect((await stored()).map((r) => [r.status, r.attempts, r.claimedBy])).toEqual([
        ['sent', 1, null],
        ['pending', 0, null],
        ['pending', 0, null],
      ]);

      // The next instance to start takes what the stopped one handed back.
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

describe('mail outbox, a message the mail server refuses', () => {
  it('should mark a message failed after its last try, count it and say so in the log', async () => {
    const logs = new LogCapture();
    // A server of its own, so no other test's outage can stand in for the refusal.
    const t = await startApp({ MAIL_MAX_ATTEMPTS: '3' }, logs);
    const mailLines = () =>
      logs.entries
        .filter((e) => e.context === 'Mail' || e.context === 'Scheduler')
        .map((e) => `${String(e.time)} ${String(e.msg)}`)
        .join('\n');
    try {
      const failedBefore = await metricOf(t, 'failed');
      t.mail.refuseWith(550, 'No such mailbox here');
      const to = uniqueEmail('bounce');
      await enqueueIn(t, to, 4);
      // MAIL_MAX_ATTEMPTS=3: now, a second later, two seconds after that.
      let last: OutboxMessage | undefined;
      await waitFor(
        async () => (last = await rowsOf(t).findOneByOrFail({ recipient: to })).status === 'failed',
        // What the row and the sender said, should it never come to that.
        { message: () => `the message is still ${JSON.stringify(last)}\n${mailLines()}` },
      );
      const row = await rowsOf(t).findOneByOrFail({ recipient: to });
      expect(row).toMatchObject({ attempts: 3, claimedBy: null, sentAt: null });
      expect(row.lastError).toMatch(/550 No such mailbox here/);
      // Counted and logged right after the row is written.
      await waitFor(async () => (await metricOf(t, 'failed')) === failedBefore + 1);
      await waitFor(() => /Gave up on test-note message \d+ after 3 attempts/.test(logs.text));
      expect(t.mail.find({ to })).toEqual([]);
    } finally {
      await t.close();
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
