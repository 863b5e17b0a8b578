import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { IsNull } from 'typeorm';
import { OneTimeLink } from '../src/one-time-links/one-time-link.entity.js';
import { Session } from '../src/auth/session.entity.js';
import { ManualClock } from '../src/clock/clock.js';
import {
  PasswordResetService,
  RESET_LINK_MINUTES,
} from '../src/password-reset/password-reset.service.js';
import { User } from '../src/users/user.entity.js';
import { createUser, uniqueEmail } from './factories/index.js';
import { sessionIdOf, visibleText } from './support/html.js';
import { LogCapture } from './support/log-capture.js';
import { addressChangeLink, PASSWORD, signedInPerson } from './support/people.js';
import { TestSmtpServer, type ReceivedMail } from './support/smtp-server.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { atTheChallenge, CHALLENGE, turnOnTwoFactor } from './support/two-factor.js';
import { sleep, waitFor } from './support/wait-for.js';
import { retriedAfter } from './support/mail-retries.js';
import { WebClient } from './support/web-client.js';

const OLD_PASSWORD = 'the old password';
const NEW_PASSWORD = 'a brand new password';
const RESET = 'Reset your Tessera password';

describe('forgotten passwords', () => {
  let t: TestApp;
  const logs = new LogCapture();
  const clock = new ManualClock();

  beforeAll(async () => {
    t = await createTestApp(
      {
        LOG_LEVEL: 'log',
        RATE_LIMIT_PASSWORD_RESET_PER_HOUR: '1000',
        RATE_LIMIT_MAIL_PER_ADDRESS_PER_HOUR: '3',
      },
      { logs, clock },
    );
  });
  afterAll(async () => {
    await t.close();
  });

  const web = () => new WebClient(t.server, t.mail);
  const person = async (name = 'Forgetful Person') => {
    const email = uniqueEmail('forgot');
    const user = await createUser(t.app, { name, email, password: OLD_PASSWORD });
    return { email, user };
  };
  const ask = (client: WebClient, email: string) =>
    client.submit('/forgot-password', '/forgot-password', { email });
  const resetMails = (email: string) => t.mail.find({ to: email, subject: RESET });
  const linkOf = (mail: ReceivedMail) => TestSmtpServer.linkPath(mail, '/reset-password/');

  it('should give the same answer, and do the same work, for an address with an account and one without', async () => {
    const { email } = await person();
    const nobody = uniqueEmail('nobody');
    // The sender busy with a slow message meanwhile, so that only the requests' own statements
    // are recorded (it is woken by each request's commit, and would otherwise run alongside).
    t.mail.slowDown(3_000);
    const { email: other } = await person();
    await ask(web(), other);
    await waitFor(() => t.mail.receiving === 1);
    const seen = [];
    for (const address of [email, nobody]) {
      const client = web();
      const csrf = await client.csrfFrom('/forgot-password');
      t.queries.clear();
      const res = await client.agent
        .post('/forgot-password')
        .type('form')
        .send({ email: address, _csrf: csrf });
      const queries = [...t.queries.queries];
      const page = await client.get(res.headers.location);
      seen.push({
        status: res.status,
        location: res.headers.location,
        page: visibleText(page.text).replace(address, '<address>'),
        queries,
      });
    }
    // Nothing is sent inline: the known address's answer came while its mail waits its turn.
    expect(t.mail.find({ to: email })).toEqual([]);
    t.mail.slowDown(0);
    expect(seen[0]).toEqual(seen[1]);
    expect(seen[0].page).toContain(
      'If an account uses that address, a link to choose a new password is on its way.',
    );
    expect(seen[0].queries.join('\n')).not.toMatch(/\busers\b/);

    const mail = await t.mail.waitFor({ to: email, subject: RESET });
    expect(mail.text).toContain('Hello Forgetful Person');
    expect(mail.text).toContain('60 minutes');
    await sleep(300);
    expect(t.mail.find({ to: nobody })).toEqual([]);
  });

  it('should set the new password with the mailed link, end every session of the account and tell its owner', async () => {
    const { email, user } = await person('Reset Person');
    const laptop = web();
    const phone = web();
    const signedIn = [
      await laptop.login(email, OLD_PASSWORD),
      await phone.login(email, OLD_PASSWORD),
    ];
    expect(signedIn.map((r) => r.headers.location)).toEqual(['/dashboard', '/dashboard']);
    const sessions = t.dataSource.getRepository(Session);
    expect(await sessions.countBy({ userId: user.id })).toBe(2);

    const visitor = web();
    await ask(visitor, email);
    const link = linkOf(await t.mail.waitFor({ to: email, subject: RESET }));
    const form = await visitor.get(link);
    expect(form.status).toBe(200);
    expect(visibleText(form.text)).toContain('Choose a new password');

    // A refused form: field messages, and no password kept.
    const refused = await visitor.submit(link, link, {
      password: 'short',
      password_confirmation: 'different',
    });
    expect(refused.headers.location).toBe(link);
    const again = await visitor.get(link);
    expect(visibleText(again.text)).toContain('Password must be 8 to 1024 characters.');
    expect(visibleText(again.text)).not.toContain('At least 8 characters.');
    expect(visibleText(again.text)).toContain('The passwords do not match.');
    expect(again.text).not.toContain('value="short"');
    expect(again.text).not.toContain('different');

    const done = await visitor.submit(link, link, {
      password: NEW_PASSWORD,
      password_confirmation: NEW_PASSWORD,
    });
    expect(done.status).toBe(303);
    expect(done.headers.location).toBe('/login');
    expect(visibleText((await visitor.get('/login')).text)).toContain(
      'Your password has been changed and your account signed out everywhere.',
    );

    expect(await sessions.countBy({ userId: user.id })).toBe(0);
    for (const client of [laptop, phone]) {
      expect((await client.get('/dashboard')).headers.location).toBe('/login?session_ended=1');
    }
    expect((await web().login(email, OLD_PASSWORD)).headers.location).toBe('/login');
    expect((await web().login(email, NEW_PASSWORD)).headers.location).toBe('/dashboard');

    const notice = await t.mail.waitFor({
      to: email,
      subject: 'Your Tessera password was changed',
    });
    expect(notice.text).toContain('every session of the account was signed out');
    // It had no passkey: the notice says nothing of passkeys.
    expect(notice.text).not.toMatch(/passkey/i);
    const row = await t.dataSource.getRepository(OneTimeLink).findOneByOrFail({ userId: user.id });
    expect(row.usedAt).toBeInstanceOf(Date);
    expect(Math.abs(row.expiresAt.getTime() - row.createdAt.getTime() - 3_600_000)).toBeLessThan(
      2_000,
    );

    // The link is spent.
    const reused = await web().get(link);
    expect(reused.status).toBe(410);
    expect(visibleText(reused.text)).toContain('This password reset link has already been used.');
    expect(reused.text).toContain('href="/forgot-password"');
  });

  it('should let a link printed for an operator set the password of an account made without one', async () => {
    const email = uniqueEmail('operator-made');
    await createUser(t.app, { name: 'No Password Yet', email });
    expect((await web().login(email, NEW_PASSWORD)).headers.location).toBe('/login');
    const { link } = await t.app.get(PasswordResetService).linkFor(email);
    const path = new URL(link).pathname;
    const client = web();
    const done = await client.submit(path, path, {
      password: NEW_PASSWORD,
      password_confirmation: NEW_PASSWORD,
    });
    expect(done.headers.location).toBe('/login');
    expect((await client.login(email, NEW_PASSWORD)).headers.location).toBe('/dashboard');
  });

  it('should end a session signed in under the old password even if it is written back after the reset', async () => {
    const { email, user } = await person();
    const thief = web();
    const signedIn = await thief.login(email, OLD_PASSWORD);
    const sid = sessionIdOf(thief.sessionCookie(signedIn)!);
    const sessions = t.dataSource.getRepository(Session);
    const stolen = await sessions.findOneByOrFail({ id: sid });

    await ask(web(), email);
    const link = linkOf(await t.mail.waitFor({ to: email, subject: RESET }));
    const owner = web();
    await owner.submit(link, link, { password: NEW_PASSWORD, password_confirmation: NEW_PASSWORD });
    expect(await sessions.countBy({ userId: user.id })).toBe(0);

    // A request of the thief's in flight during the reset saves its session again.
    await sessions.insert({ ...stolen, expiresAt: new Date(clock.nowMs() + 3_600_000) });
    expect((await thief.get('/dashboard')).headers.location).toBe('/login?session_ended=1');
  });

  it('should let only the newest link work, and answer expired and tampered links with a clear page', async () => {
    const { email } = await person();
    const client = web();
    await ask(client, email);
    await t.mail.waitFor({ to: email, subject: RESET });
    await ask(client, email);
    await waitFor(() => resetMails(email).length === 2);
    const [older, newer] = resetMails(email).map(linkOf);
    expect(older).not.toBe(newer);

    const replaced = await client.get(older);
    expect(replaced.status).toBe(404);
    expect(visibleText(replaced.text)).toContain(
      'This link does not work This password reset link is not valid. It may be incomplete, or a newer link may have replaced it.',
    );
    expect(
      (
        await client.submit(newer, older, {
          password: NEW_PASSWORD,
          password_confirmation: NEW_PASSWORD,
        })
      ).status,
    ).toBe(404);

    // An hour and a second later (RESET_LINK_MINUTES).
    clock.advance(RESET_LINK_MINUTES * 60_000 + 1000);
    const expired = await client.get(newer);
    expect(expired.status).toBe(410);
    expect(visibleText(expired.text)).toContain('This password reset link has expired.');
    const stillOld = await web().login(email, OLD_PASSWORD);
    expect(stillOld.headers.location).toBe('/dashboard');

    for (const path of [
      '/reset-password/x',
      `/reset-password/${newer.split('/').at(-1)!.toUpperCase()}`,
    ]) {
      const res = await client.get(path);
      expect(res.status).toBe(404);
      expect(res.text).toContain('Ask for a new link');
    }
  });

  it('should send an address at most its hourly share of links, answering the same past it', async () => {
    const { email } = await person();
    const answers = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const client = web();
      const res = await ask(client, email);
      answers.add(
        `${res.status} ${res.headers.location} ${visibleText((await client.get('/forgot-password')).text)}`,
      );
    }
    expect(answers.size).toBe(1);
    await t.mail.waitForCount({ to: email, subject: RESET }, 3);
    await sleep(300);
    expect(resetMails(email)).toHaveLength(3);
  });

  it('should re-render the request form with a message and the address kept', async () => {
    const client = web();
    const res = await ask(client, 'not an address');
    expect(res.headers.location).toBe('/forgot-password');
    const page = await client.get('/forgot-password');
    expect(visibleText(page.text)).toContain('Enter a valid email address.');
    expect(page.text).toContain('value="not an address"');
  });

  it('should keep the token of a link out of the request log', async () => {
    const { email } = await person();
    await ask(web(), email);
    const link = linkOf(await t.mail.waitFor({ to: email, subject: RESET }));
    const token = link.split('/').at(-1)!;
    await web().get(link);
    await request(t.server).get(`/verify-email/${token}`);
    const lines = logs.entries.filter((e) => 'status' in e);
    expect(lines.map((e) => e.path)).toContain('/reset-password/[redacted]');
    expect(lines.map((e) => e.path)).toContain('/verify-email/[redacted]');
    expect(logs.text).not.toContain(token);
  });

  /** Asks for a reset link for the address, as a visitor would, and returns its path. */
  async function resetLink(email: string): Promise<string> {
    const before = resetMails(email).length;
    await ask(web(), email);
    const mails = await t.mail.waitForCount({ to: email, subject: RESET }, before + 1);
    return linkOf(mails.at(-1)!);
  }

  it('should cancel a reset link when the password is changed after it was asked for', async () => {
    const person = await signedInPerson(t);
    const link = await resetLink(person.email);
    expect((await request(t.server).get(link)).status).toBe(200);
    const changed = await person.client.submit('/settings/password', '/settings/password', {
      current_password: PASSWORD,
      password: 'another good passphrase',
      password_confirmation: 'another good passphrase',
    });
    expect(changed.headers.location).toBe('/settings/security');
    const after = await request(t.server).get(link);
    expect(after.status).toBe(404);
    const visitor = new WebClient(t.server);
    const used = await visitor.post(link, await visitor.csrfFrom('/forgot-password'), {
      password: 'the attacker chose this',
      password_confirmation: 'the attacker chose this',
    });
    expect(used.status).toBe(404);
    expect(
      (await new WebClient(t.server).login(person.email, 'another good passphrase')).headers
        .location,
    ).toBe('/dashboard');
  });

  it('should mail no reset asked for before the password was changed, though its mail was still to be sent', async () => {
    const person = await signedInPerson(t);
    const message = await retriedAfter(
      t,
      clock,
      person.email,
      () => ask(web(), person.email),
      async () => {
        const changed = await person.client.submit('/settings/password', '/settings/password', {
          current_password: PASSWORD,
          password: 'another good passphrase',
          password_confirmation: 'another good passphrase',
        });
        expect(changed.headers.location).toBe('/settings/security');
      },
    );
    expect(message.status).toBe('dropped');
    expect(resetMails(person.email)).toEqual([]);
    expect(
      await t.dataSource
        .getRepository(OneTimeLink)
        .countBy({ userId: person.user.id, purpose: 'reset_password', usedAt: IsNull() }),
    ).toBe(0);
  });

  it('should mail no reset asked for before the address was changed, to either address', async () => {
    const person = await signedInPerson(t);
    const newEmail = uniqueEmail('moved-away');
    const changeLink = await addressChangeLink(t, person, newEmail);
    const message = await retriedAfter(
      t,
      clock,
      person.email,
      () => ask(web(), person.email),
      () => person.client.submit(changeLink, changeLink),
    );
    expect(
      (await t.dataSource.getRepository(User).findOneByOrFail({ id: person.user.id })).email,
    ).toBe(newEmail);
    expect(message.status).toBe('dropped');
    expect(resetMails(person.email)).toEqual([]);
    expect(resetMails(newEmail)).toEqual([]);
  });

  it('should cancel a reset link mailed to the old address when the address is changed', async () => {
    const person = await signedInPerson(t);
    const link = await resetLink(person.email);
    const newEmail = uniqueEmail('moved');
    const changeLink = await addressChangeLink(t, person, newEmail);
    await person.client.submit(changeLink, changeLink);
    expect(
      (await t.dataSource.getRepository(User).findOneByOrFail({ id: person.user.id })).email,
    ).toBe(newEmail);
    expect((await request(t.server).get(link)).status).toBe(404);
  });

  it('should cancel a change of address waiting for its link, which whoever held the account asked for', async () => {
    // Whoever held the account (its address registered before its owner did) asks to move it.
    const holder = await signedInPerson(t);
    const theirs = uniqueEmail('theirs');
    const changeLink = await addressChangeLink(t, holder, theirs);
    const owner = web();
    const link = await resetLink(holder.email);
    const reset = await owner.submit(link, link, {
      password: NEW_PASSWORD,
      password_confirmation: NEW_PASSWORD,
    });
    expect(reset.headers.location).toBe('/login');

    // The owner signs in: no change waits, and the link mailed for it no longer works.
    expect((await owner.login(holder.email, NEW_PASSWORD)).headers.location).toBe('/dashboard');
    expect(await owner.textOf('/settings/profile')).not.toContain('Waiting for confirmation');
    expect((await owner.get(changeLink)).status).toBe(404);
    expect((await owner.submit('/settings/profile', changeLink)).status).toBe(404);
    expect(
      (await t.dataSource.getRepository(User).findOneByOrFail({ id: holder.user.id })).email,
    ).toBe(holder.email);
  });

  it('should end a sign-in waiting for its code when the password is reset meanwhile', async () => {
    const person = await signedInPerson(t);
    const app = await turnOnTwoFactor(t, person);
    await atTheChallenge(person);
    // The owner resets the password from another browser while the first one waits.
    const link = await resetLink(person.email);
    const reset = await new WebClient(t.server).submit(link, link, {
      password: 'a new password after all',
      password_confirmation: 'a new password after all',
    });
    expect(reset.headers.location).toBe('/login');

    const late = await person.client.submit(CHALLENGE, CHALLENGE, { code: app.code(1) });
    expect(late.headers.location).toBe('/login');
    expect(visibleText((await person.client.get('/login')).text)).toContain(
      'Your password has changed. Sign in with the new one.',
    );
    expect((await person.client.get('/dashboard')).headers.location).toBe('/login');
  });
});

describe('forgotten passwords, per client', () => {
  it('should limit the requests one IP makes, whatever the addresses', async () => {
    const t = await createTestApp({ RATE_LIMIT_PASSWORD_RESET_PER_HOUR: '3' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const client = new WebClient(t.server, t.mail);
        statuses.push(
          (
            await client.submit('/forgot-password', '/forgot-password', {
              email: uniqueEmail('ip'),
            })
          ).status,
        );
      }
      expect(statuses).toEqual([303, 303, 303, 429]);
      expect(await t.dataSource.getRepository(User).count()).toBe(0);
    } finally {
      await t.close();
    }
  });
});
