import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Server } from 'node:http';
import request from 'supertest';
import { AuditEvent } from '../src/audit/audit-event.entity.js';
import { AuditLog } from '../src/audit/audit-log.js';
import type { AuditEventName } from '../src/audit/audit-events.js';
import { OutboxMessage } from '../src/mail/outbox-message.entity.js';
import { SECURITY_NOTICE_MAIL } from '../src/security-notices/security-notices.js';
import { TeamMember } from '../src/teams/team-member.entity.js';
import { User } from '../src/users/user.entity.js';
import { ManualClock } from '../src/clock/clock.js';
import { createTeam, createToken, uniqueEmail } from './factories/index.js';
import { burst, tally } from './support/burst.js';
import { newTokenValueIn, visibleText } from './support/html.js';
import { invite } from './support/teams.js';
import { addressChangeLink, PASSWORD, signedInPerson } from './support/people.js';
import { TestSmtpServer } from './support/smtp-server.js';
import { startInstances, type Instances } from './support/instances.js';
import type { TestApp } from './support/test-app.js';
import {
  atTheChallengeIn,
  CHALLENGE,
  recoveryCodesOf,
  turnOnTwoFactor,
} from './support/two-factor.js';
import { WebClient } from './support/web-client.js';
import { forgetPasswordConfirmation } from './support/sessions.js';

const TIMES = 20;

/**
 * Every transition that may happen once (using a mailed link, a recovery code or a TOTP step,
 * accepting an invitation, regenerating a token, signing a session out, signing out), tried by
 * a burst of identical requests sent at the same moment: exactly one gets through and the rest
 * are refused, nothing is done twice. Each is a conditional write whose affected-row count
 * decides. Run against one instance, and against two sharing one database with the requests
 * taking turns between them. Limits are off here: they have their own bursts.
 */
describe.each([
  ['one instance', 1],
  ['two instances', 2],
])('once-only transitions under a burst of identical requests: %s', (_name, count) => {
  let instances: Instances;
  let apps: TestApp[];
  let servers: Server[];
  let mail: TestSmtpServer;
  let t: TestApp;

  beforeAll(async () => {
    instances = await startInstances(count, { RATE_LIMIT_ENABLED: 'false' });
    ({ apps, servers, mail, first: t } = instances);
  });
  afterAll(async () => {
    await instances?.close();
  });

  /** How many events of the kind the security log holds for the account. */
  const eventsOf = async (userId: number, event: AuditEventName) => {
    for (const app of apps) await app.app.get(AuditLog).flush();
    return t.dataSource.getRepository(AuditEvent).countBy({ userId, event });
  };
  const status = (res: request.Response) => String(res.status);

  it('should set a new password with a reset link once, of 20 uses at once', async () => {
    const person = await signedInPerson(t);
    const visitor = new WebClient(t.server, mail);
    await visitor.submit('/forgot-password', '/forgot-password', { email: person.email });
    const link = TestSmtpServer.linkPath(
      await mail.waitFor({ to: person.email, subject: 'Reset your Tessera password' }),
      '/reset-password/',
    );
    const csrf = await visitor.csrfFrom(link);
    const browsers = visitor.onEach(servers);
    const answers = await burst(TIMES, servers, (i) =>
      browsers[i % browsers.length].post(link, csrf, {
        password: `new password number ${i}`,
        password_confirmation: `new password number ${i}`,
      }),
    );
    // One sets it; the others hear the link was used (or, while the hashing lanes are full,
    // to try again shortly: 503).
    const counts = tally(answers, status);
    expect(counts['303']).toBe(1);
    expect((counts['410'] ?? 0) + (counts['503'] ?? 0)).toBe(TIMES - 1);
    const winner = answers.findIndex((a) => a.status === 303);
    const signIn = await new WebClient(t.server).login(
      person.email,
      `new password number ${winner}`,
    );
    expect(signIn.headers.location).toBe('/dashboard');
    expect(await eventsOf(person.user.id, 'account.password_reset')).toBe(1);
  });

  it('should change a password once, of 20 changes made with the same current password at once', async () => {
    const person = await signedInPerson(t);
    const page = '/settings/password';
    const csrf = await person.client.csrfFrom(page);
    const browsers = person.client.onEach(servers);
    const answers = await burst(TIMES, servers, (i) =>
      browsers[i % browsers.length].post(page, csrf, {
        current_password: PASSWORD,
        password: `changed password number ${i}`,
        password_confirmation: `changed password number ${i}`,
      }),
    );
    // One changes it; the others hear the current password is not that one any more, or find
    // the session signed out (a refusal written back over the change's session ends it: sent
    // to sign in, or its form refused as the session's), or, while the hashing lanes are full,
    // are told to try again shortly (503).
    const signedOut = (res: request.Response) =>
      res.headers.location?.startsWith('/login') ||
      (res.status === 403 && visibleText(res.text).includes('your session has ended meanwhile'));
    const counts = tally(answers, (res) =>
      signedOut(res) ? 'signed out' : `${res.status} ${res.headers.location ?? ''}`,
    );
    expect(counts['303 /settings/security']).toBe(1);
    const refused = ['303 /settings/password', 'signed out', '503 '];
    expect(
      Object.keys(counts).filter((k) => k !== '303 /settings/security' && !refused.includes(k)),
    ).toEqual([]);
    const winner = answers.findIndex((a) => a.headers.location === '/settings/security');
    const signIn = await new WebClient(t.server).login(
      person.email,
      `changed password number ${winner}`,
    );
    expect(signIn.headers.location).toBe('/dashboard');
    expect(await eventsOf(person.user.id, 'account.password_changed')).toBe(1);
    await mail.waitFor({ to: person.email, subject: 'Your Tessera password was changed' });
    expect(
      mail.find({ to: person.email, subject: 'Your Tessera password was changed' }),
    ).toHaveLength(1);
  });

  it('should change an address once, of 20 confirmations of its link at once', async () => {
    const person = await signedInPerson(t);
    const link = await addressChangeLink(t, person, uniqueEmail('moved'));
    const csrf = await person.client.csrfFrom(link);
    const browsers = person.client.onEach(servers);
    const answers = await burst(TIMES, servers, (i) =>
      browsers[i % browsers.length].post(link, csrf),
    );
    expect(tally(answers, status)).toEqual({ '303': 1, '410': TIMES - 1 });
    expect(await eventsOf(person.user.id, 'account.email_changed')).toBe(1);
    const notices = await t.dataSource
      .getRepository(OutboxMessage)
      .countBy({ recipient: person.email, kind: SECURITY_NOTICE_MAIL });
    expect(notices).toBe(1);
  });

  it('should let a person join a team once, of 20 confirmations of an address registered from an invitation', async () => {
    const owner = await signedInPerson(t);
    const team = await createTeam(t.app, owner.user, 'Joined Once');
    const invitee = uniqueEmail('joiner');
    await owner.client.submit(`/teams/${team.id}`, `/teams/${team.id}/invitations`, {
      email: invitee,
      role: 'member',
    });
    const invitation = TestSmtpServer.linkPath(
      await mail.waitFor({ to: invitee, subject: /^You are invited/ }),
      '/invitations/',
    );
    const newcomer = new WebClient(t.server, mail);
    await newcomer.submit('/register', '/register', {
      name: 'New Comer',
      email: invitee,
      password: PASSWORD,
      password_confirmation: PASSWORD,
      invitation: invitation.split('/').pop()!,
    });
    await newcomer.login(invitee);
    const link = TestSmtpServer.linkPath(
      await mail.waitFor({ to: invitee, subject: 'Confirm your email address' }),
      '/verify-email/',
    );
    const csrf = await newcomer.csrfFrom(link);
    const browsers = newcomer.onEach(servers);
    const answers = await burst(TIMES, servers, (i) =>
      browsers[i % browsers.length].post(link, csrf),
    );
    // Every answer says the address is confirmed; the joining happened once.
    expect(tally(answers, status)).toEqual({ '303': TIMES });
    const user = await t.dataSource.getRepository(User).findOneByOrFail({ email: invitee });
    expect(
      await t.dataSource.getRepository(TeamMember).countBy({ teamId: team.id, userId: user.id }),
    ).toBe(1);
    expect(await eventsOf(user.id, 'team.member_joined')).toBe(1);
  });

  it('should accept an invitation once, of 20 acceptances at once', async () => {
    const owner = await signedInPerson(t);
    const team = await createTeam(t.app, owner.user, 'Accepted Once');
    const invitee = await signedInPerson(t);
    await owner.client.submit(`/teams/${team.id}`, `/teams/${team.id}/invitations`, {
      email: invitee.email,
      role: 'admin',
    });
    const link = TestSmtpServer.linkPath(
      await mail.waitFor({ to: invitee.email, subject: /^You are invited/ }),
      '/invitations/',
    );
    const csrf = await invitee.client.csrfFrom(link);
    const browsers = invitee.client.onEach(servers);
    const answers = await burst(TIMES, servers, (i) =>
      browsers[i % browsers.length].post(`${link}/accept`, csrf),
    );
    const counts = tally(answers, status);
    expect(counts['303']).toBe(1);
    expect((counts['410'] ?? 0) + (counts['404'] ?? 0)).toBe(TIMES - 1);
    expect(
      await t.dataSource
        .getRepository(TeamMember)
        .countBy({ teamId: team.id, userId: invitee.user.id }),
    ).toBe(1);
    expect(await eventsOf(invitee.user.id, 'team.member_joined')).toBe(1);
  });

  it('should sign in with a recovery code once, of 20 sign-ins using it at once', async () => {
    const person = await signedInPerson(t);
    const app = await turnOnTwoFactor(t, person);
    const halves = await atTheChallengeIn(person, servers, TIMES);
    const answers = await burst(TIMES, servers, (i) =>
      halves[i].client.post(CHALLENGE, halves[i].csrf, { recovery_code: app.recoveryCodes[0] }),
    );
    expect(tally(answers, (a) => a.headers.location)).toEqual({
      '/dashboard': 1,
      [CHALLENGE]: TIMES - 1,
    });
  });

  it('should sign in with one TOTP code once, of 20 sign-ins using it at once', async () => {
    const person = await signedInPerson(t);
    const app = await turnOnTwoFactor(t, person);
    const halves = await atTheChallengeIn(person, servers, TIMES);
    const code = app.code(1);
    const answers = await burst(TIMES, servers, (i) =>
      halves[i].client.post(CHALLENGE, halves[i].csrf, { code }),
    );
    expect(tally(answers, (a) => a.headers.location)).toEqual({
      '/dashboard': 1,
      [CHALLENGE]: TIMES - 1,
    });
  });

  it('should regenerate a token once, of 20 regenerations at once, and only that value works', async () => {
    const person = await signedInPerson(t);
    const { plaintext: old, token } = await createToken(t.app, person.user);
    const page = `/settings/api-tokens/${token.id}`;
    const shown = (await person.client.get(page)).text;
    const version = /name="version" value="(\d+)"/.exec(shown)![1];
    const csrf = await person.client.csrfFrom(page);
    const browsers = person.client.onEach(servers);
    const answers = await burst(TIMES, servers, (i) =>
      browsers[i % browsers.length].post(`${page}/regenerate`, csrf, { version }),
    );
    // The others go back to the page, told the token changed meanwhile.
    expect(tally(answers, status)).toEqual({ '200': 1, '303': TIMES - 1 });
    const value = newTokenValueIn(answers.find((a) => a.status === 200)!.text);
    const api = (bearer: string, server: Server) =>
      request(server).get('/api/v1/user/profile').set('Authorization', `Bearer ${bearer}`);
    for (const server of servers) {
      expect((await api(value, server)).status).toBe(200);
      expect((await api(old, server)).body.error.code).toBe('token_revoked');
    }
    expect(await eventsOf(person.user.id, 'token.regenerated')).toBe(1);
  });

  it('should make new recovery codes once, of 20 requests at once, and the codes shown work', async () => {
    const person = await signedInPerson(t);
    const { recoveryCodes: first } = await turnOnTwoFactor(t, person);
    const page = '/settings/security';
    const version = /name="version" value="(\d+)"/.exec((await person.client.get(page)).text)![1];
    const csrf = await person.client.csrfFrom(page);
    const browsers = person.client.onEach(servers);
    const answers = await burst(TIMES, servers, (i) =>
      browsers[i % browsers.length].post('/settings/two-factor/recovery-codes', csrf, { version }),
    );
    // The others go back to the page, told new codes were just made: no set is shown that
    // never worked.
    expect(tally(answers, status)).toEqual({ '200': 1, '303': TIMES - 1 });
    const shown = recoveryCodesOf(answers.find((a) => a.status === 200)!.text);
    expect(shown).toHaveLength(10);
    expect(await person.client.textOf(page)).toContain('New recovery codes were made a moment ago');
    expect(await eventsOf(person.user.id, 'account.recovery_codes_regenerated')).toBe(1);
    // The codes shown sign in; the first set no longer does.
    for (const [code, lands] of [
      [first[0], CHALLENGE],
      [shown[0], '/dashboard'],
    ]) {
      const [half] = await atTheChallengeIn(person, servers, 1);
      const res = await half.client.post(CHALLENGE, half.csrf, { recovery_code: code });
      expect([code, res.headers.location]).toEqual([code, lands]);
    }
  });

  it('should revoke a token once, of 20 revocations at once, and log it once', async () => {
    const person = await signedInPerson(t);
    const { plaintext, token } = await createToken(t.app, person.user);
    const csrf = await person.client.csrfFrom('/settings/api-tokens');
    const browsers = person.client.onEach(servers);
    const answers = await burst(TIMES, servers, (i) =>
      browsers[i % browsers.length].post(`/settings/api-tokens/${token.id}/revoke`, csrf),
    );
    // Every answer says the token is revoked, as it is; the revocation happened once.
    expect(tally(answers, status)).toEqual({ '303': TIMES });
    for (const server of servers) {
      const res = await request(server)
        .get('/api/v1/user/profile')
        .set('Authorization', `Bearer ${plaintext}`);
      expect(res.body.error.code).toBe('token_revoked');
    }
    expect(await eventsOf(person.user.id, 'token.revoked')).toBe(1);
  });

  it('should withdraw an invitation once, of 20 withdrawals at once', async () => {
    const owner = await signedInPerson(t);
    const team = await createTeam(t.app, owner.user, 'Withdrawals');
    await invite(owner, team.id, uniqueEmail('withdrawn'));
    const id = /action="\/teams\/\d+\/invitations\/(\d+)\/revoke"/.exec(
      (await owner.client.get(`/teams/${team.id}`)).text,
    )![1];
    const csrf = await owner.client.csrfFrom(`/teams/${team.id}`);
    const browsers = owner.client.onEach(servers);
    const answers = await burst(TIMES, servers, (i) =>
      browsers[i % browsers.length].post(`/teams/${team.id}/invitations/${id}/revoke`, csrf),
    );
    // One withdrew it; the others are told it is gone, as a withdrawal sent after is: not that
    // its link was used.
    expect(tally(answers, (a) => String(a.status))).toEqual({ 303: 1, 404: TIMES - 1 });
  });

  it('should cancel a change of address once, of 20 cancellations at once', async () => {
    const person = await signedInPerson(t);
    const newEmail = uniqueEmail('cancelled');
    const link = await addressChangeLink({ mail }, person, newEmail);
    expect(await person.client.textOf('/settings/profile')).toContain(
      `Waiting for confirmation: ${newEmail}`,
    );
    const csrf = await person.client.csrfFrom('/settings/profile');
    const browsers = person.client.onEach(servers);
    const answers = await burst(TIMES, servers, (i) =>
      browsers[i % browsers.length].post('/settings/profile/email-change/cancel', csrf),
    );
    // Each is sent back to the profile; one cancelled it, and only that one was logged.
    expect(tally(answers, (a) => `${a.status} ${a.headers.location}`)).toEqual({
      '303 /settings/profile': TIMES,
    });
    expect(await eventsOf(person.user.id, 'account.email_change_cancelled')).toBe(1);
    expect(await person.client.textOf('/settings/profile')).not.toContain(
      'Waiting for confirmation',
    );
    expect((await person.client.get(link)).status).toBe(404);
    expect(
      (await t.dataSource.getRepository(User).findOneByOrFail({ id: person.user.id })).email,
    ).toBe(person.email);
  });

  it('should sign another session out once, of 20 sign-outs of it at once', async () => {
    const person = await signedInPerson(t);
    const other = new WebClient(t.server);
    await other.login(person.email, PASSWORD);
    const handle = /action="\/settings\/sessions\/([^/]+)\/revoke"/.exec(
      (await person.client.get('/settings/sessions')).text,
    )![1];
    const csrf = await person.client.csrfFrom('/settings/sessions');
    const browsers = person.client.onEach(servers);
    const answers = await burst(TIMES, servers, (i) =>
      browsers[i % browsers.length].post(`/settings/sessions/${handle}/revoke`, csrf),
    );
    expect(tally(answers, status)).toEqual({ '303': 1, '404': TIMES - 1 });
    expect((await other.get('/dashboard')).headers.location).toBe('/login?session_ended=1');
    expect(await eventsOf(person.user.id, 'account.session_revoked')).toBe(1);
  });

  it('should sign a session out once, of 20 sign-outs sent from it at once', async () => {
    const person = await signedInPerson(t);
    const csrf = await person.client.csrfFrom('/dashboard');
    const browsers = person.client.onEach(servers);
    const answers = await burst(TIMES, servers, (i) =>
      browsers[i % browsers.length].post('/logout', csrf),
    );
    // Each answer leads to the sign-in page; the sign-out itself happened, and was logged, once.
    expect(answers.every((a) => a.status === 303 || a.status === 403)).toBe(true);
    expect(
      answers.filter((a) => a.headers.location === '/login?signed_out=1').length,
    ).toBeGreaterThanOrEqual(1);
    expect((await person.client.get('/dashboard')).headers.location).toBe('/login');
    expect(await eventsOf(person.user.id, 'sign-in.signed_out')).toBe(1);
  });
});

/**
 * The form that waited for a password confirmation, handed out by the continue page once: the
 * session's requests at once, on two instances, each read it, and one takes it.
 */
describe('the waiting form after a password confirmation, under a burst of its continue page', () => {
  const clock = new ManualClock();
  let instances: Instances;

  beforeAll(async () => {
    instances = await startInstances(2, { RATE_LIMIT_ENABLED: 'false' }, { clock });
  });
  afterAll(async () => {
    await instances?.close();
  });

  it('should hand the waiting form out once, of 20 continue pages opened at once', async () => {
    const { first: t, servers } = instances;
    const person = await signedInPerson(t);
    forgetPasswordConfirmation(clock);
    const asked = await person.client.submit('/settings/profile', '/settings/profile', {
      name: 'Waiting Person',
      email: uniqueEmail('moving'),
    });
    expect(asked.headers.location).toMatch(/^\/confirm-password\?/);
    const confirmed = await person.client.submit(asked.headers.location, '/confirm-password', {
      password: PASSWORD,
      return_to: '/settings/profile',
    });
    expect(confirmed.headers.location).toBe('/confirm-password/continue');
    const browsers = person.client.onEach(servers);
    const answers = await burst(TIMES, servers, (i) =>
      browsers[i % browsers.length].get('/confirm-password/continue'),
    );
    expect(
      tally(answers, (res) => {
        const text = visibleText(res.text);
        if (text.includes('No action is waiting for your password')) return 'nothing';
        return text.includes('Change your email address') ? 'handed out' : String(res.status);
      }),
    ).toEqual({ 'handed out': 1, nothing: TIMES - 1 });
  });
});
