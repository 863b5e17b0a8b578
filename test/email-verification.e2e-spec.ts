import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { Like } from 'typeorm';
import { ManualClock } from '../src/clock/clock.js';
import { OneTimeLink } from '../src/one-time-links/one-time-link.entity.js';
import { PersonalAccessToken } from '../src/tokens/personal-access-token.entity.js';
import { Session } from '../src/auth/session.entity.js';
import { User } from '../src/users/user.entity.js';
import { uniqueEmail } from './factories/index.js';
import { NEW_TOKEN_VALUE, visibleText } from './support/html.js';
import { PASSWORD, signedInPerson } from './support/people.js';
import { TestSmtpServer } from './support/smtp-server.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { sleep } from './support/wait-for.js';
import { WebClient } from './support/web-client.js';

const TOKENS = '/settings/api-tokens';
const CONFIRM = 'Confirm your email address';

describe('confirming an e-mail address', () => {
  let t: TestApp;
  const clock = new ManualClock();

  beforeAll(async () => {
    t = await createTestApp(
      {
        RATE_LIMIT_VERIFY_RESEND_PER_HOUR: '2',
        // Signed in for longer than a link lives, to open one that has expired.
        SESSION_IDLE_TIMEOUT_MINUTES: '2880',
        SESSION_ABSOLUTE_TIMEOUT_HOURS: '48',
      },
      { clock },
    );
  });
  // The machine's time at each test's start, moved only by the test.
  beforeEach(() => clock.set(Date.now()));
  afterAll(async () => {
    await t.close();
  });

  const users = () => t.dataSource.getRepository(User);

  /** A person who signed up and signed in, without following the link yet. */
  async function unconfirmed(name = 'Unconfirmed') {
    const email = uniqueEmail('confirm');
    const client = new WebClient(t.server, t.mail);
    await client.register(name, email, 'correct horse battery', { confirm: false });
    const mail = await t.mail.waitFor({ to: email, subject: CONFIRM });
    return { client, email, mail, link: TestSmtpServer.linkPath(mail, '/verify-email/') };
  }

  it('should let an unconfirmed person sign in, and say on the tokens page why no token can be made yet', async () => {
    const { client, email } = await unconfirmed();
    const page = await client.get(TOKENS);
    expect(page.status).toBe(200);
    const text = visibleText(page.text);
    expect(text).toContain('Confirm your email address first');
    expect(text).toContain(email);
    expect(page.text).toContain('action="/verify-email/resend"');
    expect(page.text).not.toContain('Create token');

    const refused = await client.submit(TOKENS, TOKENS, {
      name: 'too early',
      abilities: 'user:read',
    });
    expect(refused.status).toBe(403);
    expect(visibleText(refused.text)).toContain(
      'Confirm your email address before creating API tokens',
    );
    expect(refused.text).toContain('href="/settings/api-tokens"');
    const user = await users().findOneByOrFail({ email });
    expect(await t.dataSource.getRepository(PersonalAccessToken).countBy({ userId: user.id })).toBe(
      0,
    );
  });

  it('should say on every page that the address is unconfirmed, with Resend coming back to that page, until it is confirmed', async () => {
    const { client, email, link } = await unconfirmed('Banner Reader');
    for (const path of ['/dashboard', '/teams', '/settings/profile', '/settings/sessions']) {
      const page = await client.get(path);
      const text = visibleText(page.text);
      expect(text).toContain(`Confirm your email address. We sent a link to ${email}`);
      expect(page.text).toMatch(
        new RegExp(`action="/verify-email/resend"[^]*?name="return_to" value="${path}"`),
      );
    }
    const resent = await client.submit('/teams', '/verify-email/resend', { return_to: '/teams' });
    expect(resent.headers.location).toBe('/teams');
    expect(visibleText((await client.get('/teams')).text)).toContain(
      'A new confirmation link is on its way.',
    );
    await t.mail.waitForCount({ to: email, subject: CONFIRM }, 2);
    // Back to a page of this site only.
    const elsewhere = await client.submit('/teams', '/verify-email/resend', {
      return_to: '//evil.example/',
    });
    expect(elsewhere.headers.location).toBe(TOKENS);

    const newest = TestSmtpServer.linkPath(
      (await t.mail.waitForCount({ to: email, subject: CONFIRM }, 3)).at(-1)!,
      '/verify-email/',
    );
    expect(newest).not.toBe(link);
    // The link's own page does not offer Resend, which would replace the link it is on.
    const linkPage = await client.get(newest);
    expect(linkPage.status).toBe(200);
    expect(linkPage.text).not.toContain('data-address-unconfirmed');
    await client.submit(newest, newest);
    for (const path of ['/dashboard', '/teams']) {
      const page = await client.get(path);
      expect(visibleText(page.text)).not.toContain('Confirm your email address.');
      expect(page.text).not.toContain('data-address-unconfirmed');
    }
  });

  it('should name the address on the check-your-mail page and send a new link from it, a limited number of times', async () => {
    const email = uniqueEmail('signup-resend');
    const client = new WebClient(t.server, t.mail);
    const res = await client.submit('/register', '/register', {
      name: 'New Comer',
      email,
      password: 'correct horse battery',
      password_confirmation: 'correct horse battery',
    });
    expect(res.headers.location).toBe('/register/check-email');
    const first = await t.mail.waitFor({ to: email, subject: CONFIRM });
    expect(await client.textOf('/register/check-email')).toContain(`We sent a message to ${email}`);

    // Sent at once from one page: two new links an hour (RATE_LIMIT_VERIFY_RESEND_PER_HOUR=2).
    const csrf = await client.csrfFrom('/register/check-email');
    const burst = await Promise.all(
      Array.from({ length: 5 }, () => client.post('/register/resend', csrf)),
    );
    expect(burst.map((r) => r.status).sort()).toEqual([303, 303, 429, 429, 429]);
    expect(await client.textOf('/register/check-email')).toContain(
      `If an account waits for ${email} to be confirmed, a new link is on its way`,
    );
    const mails = await t.mail.waitForCount({ to: email, subject: CONFIRM }, 3);
    const newest = TestSmtpServer.linkPath(mails.at(-1)!, '/verify-email/');
    expect((await client.get(TestSmtpServer.linkPath(first, '/verify-email/'))).status).toBe(404);
    expect((await client.get(newest)).status).toBe(200);
  });

  it('should confirm the address with the mailed link, once, after which tokens can be made', async () => {
    const { client, email, mail, link } = await unconfirmed('Ada Confirmer');
    expect(mail.text).toContain('Hello Ada Confirmer');
    expect(mail.html).toContain(`href="${mail.links[0]}"`);
    const token = link.split('/').at(-1)!;

    // Opening the link changes nothing (mail scanners open links too): its button confirms.
    const opened = await client.get(link);
    expect(opened.status).toBe(200);
    expect(visibleText(opened.text)).toContain(`Confirm that ${email} is your address`);
    expect((await users().findOneByOrFail({ email })).emailVerifiedAt).toBeNull();
    const confirmed = await client.submit(link, link);
    expect(`${confirmed.status} ${confirmed.headers.location}`).toBe(`303 ${TOKENS}`);
    expect(visibleText((await client.get(TOKENS)).text)).toContain(
      'Your email address is confirmed. You can create API tokens now.',
    );
    const user = await users().findOneByOrFail({ email });
    expect(user.emailVerifiedAt).toBeInstanceOf(Date);
    // The check-your-mail page has nothing left to say: it leads to the dashboard.
    expect((await client.get('/register/check-email')).headers.location).toBe('/dashboard');

    // Only the hash is stored, the token is spent, and no table holds the link.
    const row = await t.dataSource.getRepository(OneTimeLink).findOneByOrFail({ userId: user.id });
    expect(row.purpose).toBe('verify_email');
    expect(row.usedAt).toBeInstanceOf(Date);
    expect(row.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    for (const table of ['account_tokens', 'mail_outbox', 'users', 'sessions']) {
      expect(JSON.stringify(await t.dataSource.query(`SELECT * FROM ${table}`))).not.toContain(
        token,
      );
    }
    expect(row.expiresAt.getTime() - row.createdAt.getTime()).toBeGreaterThan(23.9 * 3_600_000);
    expect(row.expiresAt.getTime() - clock.nowMs()).toBeLessThanOrEqual(24 * 3_600_000);

    // Opened again: it says the address is confirmed, nothing more.
    const again = await client.get(link);
    expect(again.status).toBe(200);
    expect(visibleText(again.text)).toContain('Your email address is confirmed');

    const created = await client.submit(TOKENS, TOKENS, {
      name: 'works now',
      abilities: 'user:read',
    });
    expect(created.status).toBe(200);
    expect(created.text).toMatch(NEW_TOKEN_VALUE);
  });

  it('should answer a tampered, an unknown, a replaced and an expired link with a page that says so', async () => {
    const { client, email, link } = await unconfirmed();
    const tampered = await client.get(`${link.slice(0, -1)}${link.endsWith('A') ? 'B' : 'A'}`);
    expect(tampered.status).toBe(404);
    expect(visibleText(tampered.text)).toContain('This confirmation link is not valid.');
    expect(tampered.text).toContain('Ask for a new link');
    for (const path of ['/verify-email/x', `/verify-email/${'A'.repeat(43)}`]) {
      expect((await client.get(path)).status).toBe(404);
    }

    // Asking for a new link replaces the first one.
    const resent = await client.submit(TOKENS, '/verify-email/resend');
    expect(resent.status).toBe(303);
    expect(resent.headers.location).toBe(TOKENS);
    expect(visibleText((await client.get(TOKENS)).text)).toContain(
      'A new confirmation link is on its way.',
    );
    await t.mail.waitForCount({ to: email, subject: CONFIRM }, 2);
    const newest = TestSmtpServer.linkPath(
      t.mail.find({ to: email, subject: CONFIRM })[1],
      '/verify-email/',
    );
    expect(newest).not.toBe(link);
    expect((await client.get(link)).status).toBe(404);

    // A day and a second later: a link lives 24 hours.
    clock.advance(24 * 3_600_000 + 1000);
    const expired = await client.get(newest);
    expect(expired.status).toBe(410);
    expect(visibleText(expired.text)).toContain('This confirmation link has expired.');
    expect((await users().findOneByOrFail({ email })).emailVerifiedAt).toBeNull();
  });

  it('should limit how often one account asks for a new link', async () => {
    const { client, email } = await unconfirmed();
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      statuses.push((await client.submit(TOKENS, '/verify-email/resend')).status);
    }
    expect(statuses).toEqual([303, 303, 429]);
    await t.mail.waitForCount({ to: email, subject: CONFIRM }, 3);
  });

  it('should say there is nothing to confirm to a person whose address is confirmed', async () => {
    const client = new WebClient(t.server, t.mail);
    const email = uniqueEmail('done');
    await client.register('Done Already', email);
    await client.submit(TOKENS, '/verify-email/resend');
    expect(visibleText((await client.get(TOKENS)).text)).toContain(
      'Your email address is confirmed already.',
    );
    expect(t.mail.find({ to: email, subject: CONFIRM })).toHaveLength(1);
  });

  it('should confirm an address only when the signed-in account the link was sent for posts it', async () => {
    const email = uniqueEmail('confirming');
    const owner = new WebClient(t.server, t.mail);
    await owner.register('Real Owner', email, PASSWORD, { confirm: false });
    const mail = await t.mail.waitFor({ to: email, subject: 'Confirm your email address' });
    const link = TestSmtpServer.linkPath(mail, '/verify-email/');
    const confirmed = async () => (await users().findOneByOrFail({ email })).emailVerifiedAt;

    // A mail scanner opens it, with no cookies: a page that asks for a sign-in, nothing more.
    const scanned = await request(t.server).get(link);
    expect(scanned.status).toBe(200);
    expect(visibleText(scanned.text)).toContain('Sign in to confirm');
    expect((await request(t.server).head(link)).status).toBe(200);
    expect((await request(t.server).post(link)).status).toBe(403);
    // Another account, signed in (the owner's other one, most often), is told whose link it is
    // not, and how to go on; it cannot confirm it.
    const other = await signedInPerson(t);
    const elsewhere = await other.client.get(link);
    expect(elsewhere.status).toBe(200);
    const said = visibleText(elsewhere.text);
    expect(said).toContain(
      `This link confirms the address of another account. You are signed in as ${other.email}`,
    );
    expect(said).toContain('sign out, then open the link again');
    expect(elsewhere.text).not.toContain('Confirm my address');
    expect(elsewhere.text).not.toContain(email);
    const csrf = await other.client.csrfFrom('/dashboard');
    expect((await other.client.post(link, csrf)).status).toBe(404);
    expect(await confirmed()).toBeNull();

    await owner.confirmEmail(email);
    expect(await confirmed()).toBeInstanceOf(Date);
  });
});

describe('with EMAIL_VERIFICATION=off', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ EMAIL_VERIFICATION: 'off' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('should send no confirmation and let a new person create tokens at once', async () => {
    const client = new WebClient(t.server, t.mail);
    const email = uniqueEmail('off');
    const res = await client.submit('/register', '/register', {
      name: 'No Mail',
      email,
      password: 'correct horse battery',
      password_confirmation: 'correct horse battery',
    });
    expect(visibleText((await client.get(res.headers.location)).text)).toContain(
      'your account is ready',
    );
    await client.login(email);
    const page = await client.get(TOKENS);
    expect(page.text).toContain('Create token');
    // No address is confirmed here: no page asks for it.
    for (const shown of [page, await client.get('/dashboard')]) {
      expect(shown.text).not.toContain('data-address-unconfirmed');
    }
    const created = await client.submit(TOKENS, TOKENS, {
      name: 'at once',
      abilities: 'user:read',
    });
    expect(created.text).toMatch(NEW_TOKEN_VALUE);
    // The only mail is the notice of the new token: no confirmation.
    await t.mail.waitFor({ to: email, subject: 'A new API token was created' });
    await sleep(300);
    expect(t.mail.find({ to: email }).map((m) => m.subject)).toEqual([
      'A new API token was created',
    ]);
    const user = await t.dataSource.getRepository(User).findOneByOrFail({ email });
    expect(user.emailVerifiedAt).toBeNull();
  });
});

describe('a check-your-mail page left open past its visitor session', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_ENABLED: 'false' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('should say how to get a new link once the page no longer knows the address', async () => {
    const client = new WebClient(t.server, t.mail);
    const email = uniqueEmail('left-open');
    await client.submit('/register', '/register', {
      name: 'Slow Reader',
      email,
      password: 'correct horse battery',
      password_confirmation: 'correct horse battery',
    });
    const form = await client.csrfFrom('/register/check-email');
    // The visitor session that held the address ends (after minutes), the page still open.
    await t.dataSource.getRepository(Session).delete({ data: Like(`%${email}%`) });
    expect((await client.post('/register/resend', form)).status).toBe(303);
    expect(await client.textOf('/register/check-email')).toContain(
      'This page was open too long to send a new link from it. Sign in with the address and password you signed up with: the page you land on sends a new link.',
    );
  });
});
