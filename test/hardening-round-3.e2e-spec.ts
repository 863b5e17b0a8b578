import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { Session } from '../src/auth/session.entity.js';
import { TeamInvitation } from '../src/invitations/team-invitation.entity.js';
import { User } from '../src/users/user.entity.js';
import { AuditLog } from '../src/audit/audit-log.js';
import { addMember, createTeam, createToken, uniqueEmail } from './factories/index.js';
import { PersonalAccessToken } from '../src/tokens/personal-access-token.entity.js';
import { burst } from './support/burst.js';
import { csrfTokenIn, newTokenValueIn, sessionIdOf, visibleText } from './support/html.js';
import { addressChangeLink, PASSWORD, signedInPerson } from './support/people.js';
import { invite, rolesIn } from './support/teams.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { startInstances, type Instances } from './support/instances.js';
import { TestSmtpServer } from './support/smtp-server.js';
import { atTheChallenge, CHALLENGE, turnOnTwoFactor } from './support/two-factor.js';
import { WebClient } from './support/web-client.js';

/**
 * One regression test (or more) per finding of the third security review; each failed before
 * its fix. They run on SQLite, and on MariaDB when TEST_DATABASE_URL names it; the races on two
 * instances sharing one database as well as on one. The limits under a burst of concurrent
 * requests (finding 1) have a spec of their own: limits-under-burst.e2e-spec.ts.
 */
const users = (t: TestApp) => t.dataSource.getRepository(User);

describe('hardening, third round', () => {
  describe.each([
    ['one instance', 1],
    ['two instances', 2],
  ])('2. a session signed out from the Sessions page stays signed out: %s', (_name, count) => {
    let instances: Instances;

    beforeAll(async () => {
      instances = await startInstances(count, { RATE_LIMIT_ENABLED: 'false' });
    });
    afterAll(async () => {
      await instances?.close();
    });

    it('should not bring a revoked session back, whatever requests of its own were in flight', async () => {
      const { first: t, servers } = instances;
      for (let round = 0; round < 5; round++) {
        const owner = await signedInPerson(t);
        // Someone else holds a second session of the account, and keeps using it.
        const thief = new WebClient(t.server);
        const stolen = await thief.login(owner.email, owner.password);
        const sid = sessionIdOf(thief.sessionCookie(stolen)!);
        const page = (await owner.client.get('/settings/sessions')).text;
        const handle = /action="\/settings\/sessions\/([^/]+)\/revoke"/.exec(page)![1];
        const csrf = await owner.client.csrfFrom('/settings/sessions');

        // Each request looks like a new browser, so each one writes the session back as it ends.
        const thieves = servers.map((server) => thief.on(server));
        const flood = burst(40, servers, (i) =>
          thieves[i % thieves.length].get('/dashboard').set('User-Agent', `Thief/${round}.${i}`),
        );
        const revoked = owner.client.post(`/settings/sessions/${handle}/revoke`, csrf);
        const [answers, revoke] = await Promise.all([flood, revoked]);
        // The status with the answer, so that a refusal says what it was.
        expect({ status: revoke.status, location: revoke.headers.location }).toEqual({
          status: 303,
          location: '/settings/sessions',
        });
        expect(answers.every((a) => a.status === 200 || a.status === 303)).toBe(true);

        expect(await t.dataSource.getRepository(Session).existsBy({ id: sid })).toBe(false);
        for (const client of thieves) {
          expect((await client.get('/dashboard')).headers.location).toBe('/login');
        }
        expect((await owner.client.get('/dashboard')).status).toBe(200);
      }
    });
  });

  describe('3. limiter memory', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await createTestApp({ TRUST_PROXY: '1', RATE_LIMIT_MEMORY_MAX_KEYS: '100' });
    });
    afterAll(async () => {
      await t.close();
    });

    it("should keep a person's wrong two-factor codes counted whatever a flood of other keys brings", async () => {
      const person = await signedInPerson(t);
      const app = await turnOnTwoFactor(t, person);
      await atTheChallenge(person);
      const right = app.code(1);
      const wrong = right === '123456' ? '654321' : '123456';
      for (let i = 0; i < 4; i++) {
        const res = await person.client.submit(CHALLENGE, CHALLENGE, { code: wrong });
        expect(res.headers.location).toBe(CHALLENGE);
      }
      // 150 clients that each start a count of their own: more than the in-process bound.
      const floods = await burst(150, t.server, (i) =>
        request(t.server)
          .get('/api/v1/team')
          .set('X-Forwarded-For', `10.${randomBytes(1)[0]}.${i >> 8}.${i & 255}`),
      );
      expect(floods.every((res) => res.status === 401)).toBe(true);

      const fifth = await person.client.submit(CHALLENGE, CHALLENGE, { code: wrong });
      expect(fifth.headers.location).toBe(CHALLENGE);
      const refused = await person.client.submit(CHALLENGE, CHALLENGE, { code: right });
      expect(refused.status).toBe(429);
      expect((await person.client.get('/dashboard')).headers.location).toBe('/login');
    });
  });

  describe('4, 5, 6. mailed links, admins and invitations', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await createTestApp({ RATE_LIMIT_ENABLED: 'false' });
    });
    afterAll(async () => {
      await t.close();
    });

    const users = () => t.dataSource.getRepository(User);

    it('should confirm an address only by a POST from the signed-in account the link was sent for', async () => {
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
      // Another account, signed in, hears it does not exist, and cannot post it either.
      const other = await signedInPerson(t);
      expect((await other.client.get(link)).status).toBe(404);
      const csrf = await other.client.csrfFrom('/dashboard');
      expect((await other.client.post(link, csrf)).status).toBe(404);
      expect(await confirmed()).toBeNull();

      await owner.confirmEmail(email);
      expect(await confirmed()).toBeInstanceOf(Date);
    });

    it('should not let someone who registered an invited address join when a scanner opens its confirmation link', async () => {
      const owner = await signedInPerson(t, { name: 'Team Owner' });
      const team = await createTeam(t.app, owner.user, 'Squatted');
      const victim = uniqueEmail('invited');
      expect((await invite(owner, team.id, victim, 'admin')).status).toBe(303);
      // The attacker signs up with the invited address first and signs in.
      const attacker = new WebClient(t.server, t.mail);
      await attacker.register('Not The Invitee', victim, PASSWORD, { confirm: false });
      const mail = await t.mail.waitFor({ to: victim, subject: 'Confirm your email address' });
      // The victim's mail scanner opens every link in the mail.
      for (const link of mail.links) await request(t.server).get(new URL(link).pathname);
      expect((await users().findOneByOrFail({ email: victim })).emailVerifiedAt).toBeNull();

      const invitation = await t.dataSource
        .getRepository(TeamInvitation)
        .findOneByOrFail({ teamId: team.id });
      const csrf = await attacker.csrfFrom('/dashboard');
      const accepted = await attacker.post(`/invitations/pending/${invitation.id}/accept`, csrf);
      expect(accepted.status).toBe(403);
      expect(await rolesIn(t, team.id)).toEqual({ [owner.user.id]: 'owner' });
    });

    it("should change an address only by a POST from the link's page, whoever opens the link first", async () => {
      const person = await signedInPerson(t);
      const newEmail = uniqueEmail('moving');
      const link = await addressChangeLink(t, person, newEmail);
      const mail = t.mail.find({ to: newEmail, subject: 'Confirm your new email address' })[0];
      expect(mail.text).not.toContain(person.user.name);
      expect((await request(t.server).get(link)).headers.location).toMatch(/^\/login/);
      expect((await person.client.get(link)).status).toBe(200);
      expect((await users().findOneByOrFail({ id: person.user.id })).email).toBe(person.email);
      expect((await person.client.submit(link, link)).headers.location).toBe('/settings/profile');
      expect((await users().findOneByOrFail({ id: person.user.id })).email).toBe(newEmail);
    });

    /** An owner, two admins and a member of a new team, each signed in. */
    async function staffedTeam() {
      const [owner, adminA, adminB, member] = await Promise.all(
        ['Owner', 'Admin A', 'Admin B', 'Member'].map((name) => signedInPerson(t, { name })),
      );
      const team = await createTeam(t.app, owner.user, `Staffed ${randomBytes(3).toString('hex')}`);
      await addMember(t.app, team.id, adminA.user, 'admin');
      await addMember(t.app, team.id, adminB.user, 'admin');
      await addMember(t.app, team.id, member.user, 'member');
      return { team, owner, adminA, adminB, member };
    }

    it("should let only the owner change an admin's role, so an admin cannot remove another in two steps", async () => {
      const { team, owner, adminA, adminB, member } = await staffedTeam();
      const page = (await adminA.client.get(`/teams/${team.id}`)).text;
      expect(page).not.toContain(`/members/${adminB.user.id}/role`);
      expect(page).toContain(`/members/${member.user.id}/role`);

      const demoted = await adminA.client.submit(
        `/teams/${team.id}`,
        `/teams/${team.id}/members/${adminB.user.id}/role`,
        { role: 'member' },
      );
      expect(demoted.status).toBe(403);
      expect(visibleText(demoted.text)).toContain(
        "Only the team owner can change an admin's role.",
      );
      const removed = await adminA.client.submit(
        `/teams/${team.id}`,
        `/teams/${team.id}/members/${adminB.user.id}/remove`,
      );
      expect(removed.status).toBe(403);
      expect((await rolesIn(t, team.id))[adminB.user.id]).toBe('admin');

      // An admin still makes a member an admin; the owner changes an admin's role.
      const promoted = await adminA.client.submit(
        `/teams/${team.id}`,
        `/teams/${team.id}/members/${member.user.id}/role`,
        { role: 'admin' },
      );
      expect(promoted.status).toBe(303);
      const byOwner = await owner.client.submit(
        `/teams/${team.id}`,
        `/teams/${team.id}/members/${adminB.user.id}/role`,
        { role: 'member' },
      );
      expect(byOwner.status).toBe(303);
      expect(await rolesIn(t, team.id)).toMatchObject({
        [adminB.user.id]: 'member',
        [member.user.id]: 'admin',
      });
    });

    it('should let no admin demote or remove another while the owner promotes them at the same moment', async () => {
      const { team, owner, adminA, member } = await staffedTeam();
      const [adminCsrf, ownerCsrf] = await Promise.all([
        adminA.client.csrfFrom(`/teams/${team.id}`),
        owner.client.csrfFrom(`/teams/${team.id}`),
      ]);
      // The member is made an admin while another admin tries to remove them, 20 times at once.
      const answers = await Promise.all([
        owner.client.post(`/teams/${team.id}/members/${member.user.id}/role`, ownerCsrf, {
          role: 'admin',
        }),
        ...Array.from({ length: 20 }, () =>
          adminA.client.post(`/teams/${team.id}/members/${member.user.id}/remove`, adminCsrf),
        ),
      ]);
      expect(answers[0].status === 303 || answers[0].status === 404).toBe(true);
      const after = await rolesIn(t, team.id);
      // Either removed while still a member (and then the promotion found no one), or promoted
      // first and then kept: never an admin removed by an admin.
      if (after[member.user.id] === undefined) expect(answers[0].status).toBe(404);
      else expect(after[member.user.id]).toBe('admin');
      expect(answers.slice(1).filter((a) => a.status === 303).length).toBeLessThanOrEqual(1);
    });

    it("should not let an invitation outlive its sender's right to invite", async () => {
      const { team, owner, adminA, adminB } = await staffedTeam();
      const [first, second, third] = [uniqueEmail('one'), uniqueEmail('two'), uniqueEmail('three')];
      const invitees = await Promise.all(
        [first, second, third].map((email) => signedInPerson(t, { email })),
      );
      expect((await invite(adminA, team.id, first, 'admin')).status).toBe(303);
      expect((await invite(adminA, team.id, second, 'admin')).status).toBe(303);
      expect((await invite(adminB, team.id, third, 'admin')).status).toBe(303);
      const linkOf = async (email: string) =>
        TestSmtpServer.linkPath(
          await t.mail.waitFor({ to: email, subject: /^You are invited/ }),
          '/invitations/',
        );
      const [firstLink, secondLink] = [await linkOf(first), await linkOf(second)];

      // Admin A is removed from the team, admin B made a member: their invitations go with it.
      await owner.client.submit(
        `/teams/${team.id}`,
        `/teams/${team.id}/members/${adminA.user.id}/remove`,
      );
      await owner.client.submit(
        `/teams/${team.id}`,
        `/teams/${team.id}/members/${adminB.user.id}/role`,
        {
          role: 'member',
        },
      );
      const listed = (await owner.client.get(`/teams/${team.id}`)).text;
      for (const email of [first, second, third]) expect(listed).not.toContain(email);

      const shown = await invitees[0].client.get(firstLink);
      expect(shown.status).toBe(410);
      expect(visibleText(shown.text)).toContain(
        'This invitation link no longer works: it was withdrawn.',
      );
      const accepted = await invitees[1].client.submit('/dashboard', `${secondLink}/accept`);
      expect(accepted.status).toBe(410);
      const pending = (await invitees[2].client.get('/dashboard')).text;
      expect(pending).not.toContain('Staffed');
      expect(Object.keys(await rolesIn(t, team.id)).map(Number)).not.toEqual(
        expect.arrayContaining(invitees.map((i) => i.user.id)),
      );
      expect(Object.keys(await rolesIn(t, team.id))).toHaveLength(3);
    });
  });

  describe('7, 8, 9, 10. old links, half-finished sign-ins, regenerated tokens, the security log', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await createTestApp({ RATE_LIMIT_ENABLED: 'false', TRUST_PROXY: '1' });
    });
    afterAll(async () => {
      await t.close();
    });

    const RESET = 'Reset your Tessera password';
    /** Asks for a reset link for the address, as a visitor would, and returns its path. */
    async function resetLink(email: string): Promise<string> {
      const before = t.mail.find({ to: email, subject: RESET }).length;
      await new WebClient(t.server).submit('/forgot-password', '/forgot-password', { email });
      const mails = await t.mail.waitForCount({ to: email, subject: RESET }, before + 1);
      return TestSmtpServer.linkPath(mails.at(-1)!, '/reset-password/');
    }

    it('should cancel a reset link asked for before the password is changed', async () => {
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

    it('should cancel a reset link mailed to the old address once the address is changed', async () => {
      const person = await signedInPerson(t);
      const link = await resetLink(person.email);
      const newEmail = uniqueEmail('moved');
      const changeLink = await addressChangeLink(t, person, newEmail);
      await person.client.submit(changeLink, changeLink);
      expect((await users(t).findOneByOrFail({ id: person.user.id })).email).toBe(newEmail);
      expect((await request(t.server).get(link)).status).toBe(404);
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

    it('should give no grace to the old value of a token regenerated after it expired', async () => {
      const person = await signedInPerson(t);
      const { plaintext: old, token } = await createToken(t.app, person.user, {
        expiresInDays: 30,
      });
      // Made 31 days ago for 30 days: expired yesterday.
      const createdAt = new Date(Date.now() - 31 * 86_400_000);
      await t.dataSource
        .getRepository(PersonalAccessToken)
        .update(
          { id: token.id },
          { createdAt, expiresAt: new Date(createdAt.getTime() + 30 * 86_400_000) },
        );
      const expired = await request(t.server)
        .get('/api/v1/user/profile')
        .set('Authorization', `Bearer ${old}`);
      expect(expired.body.error.code).toBe('token_expired');
      const page = `/settings/api-tokens/${token.id}`;
      const res = await person.client.submit(page, `${page}/regenerate`, { grace_minutes: '60' });
      expect(res.status).toBe(200);
      expect(visibleText(res.text)).toContain('The old value is refused from now on.');
      const value = newTokenValueIn(res.text);
      const api = (bearer: string) =>
        request(t.server).get('/api/v1/user/profile').set('Authorization', `Bearer ${bearer}`);
      const refused = await api(old);
      expect(refused.status).toBe(401);
      expect(refused.body.error.code).toBe('token_revoked');
      expect((await api(value)).status).toBe(200);
    });

    it('should show a member neither the address nor the browser of the admin who acted on them', async () => {
      const owner = await signedInPerson(t, { name: 'Olive Owner' });
      const admin = await signedInPerson(t, { name: 'Adam Admin' });
      const member = await signedInPerson(t, { name: 'Mia Member' });
      const team = await createTeam(t.app, owner.user, 'Watched');
      await addMember(t.app, team.id, admin.user, 'admin');
      await addMember(t.app, team.id, member.user, 'member');
      const csrf = await admin.client.csrfFrom(`/teams/${team.id}`);
      const removed = await admin.client
        .post(`/teams/${team.id}/members/${member.user.id}/remove`, csrf)
        .set('X-Forwarded-For', '203.0.113.77')
        .set(
          'User-Agent',
          'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0',
        );
      expect(removed.status).toBe(303);
      await t.app.get(AuditLog).flush();

      const own = visibleText((await member.client.get('/settings/security-log')).text);
      expect(own).toContain('Adam Admin');
      expect(own).not.toContain('203.0.113.77');
      expect(own).not.toContain('Firefox');
      const teamLog = visibleText((await owner.client.get(`/teams/${team.id}/audit-log`)).text);
      expect(teamLog).toContain('203.0.113.77');
      expect(teamLog).toContain('Firefox');
      // The admin's own log shows their own address, as ever.
      expect(visibleText((await admin.client.get('/settings/security-log')).text)).toContain(
        '203.0.113.77',
      );
    });
  });

  describe('11, 12. sessions for visitors, codes, subjects', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await createTestApp({ RATE_LIMIT_ENABLED: 'false' });
    });
    afterAll(async () => {
      await t.close();
    });

    it('should store no session for a thousand views of the sign-in page, and still refuse a forged form', async () => {
      const sessions = t.dataSource.getRepository(Session);
      const before = await sessions.count();
      // Ten waves of 100 at once: a thousand connections opened in one go can overflow the
      // listening socket's queue (511) on a busy machine (a reset once), and it is the views
      // that count here.
      const views: request.Response[] = [];
      for (let wave = 0; wave < 10; wave++) {
        views.push(...(await burst(100, t.server, () => request(t.server).get('/login'))));
      }
      expect(views.every((v) => v.status === 200 && v.text.includes('name="_csrf"'))).toBe(true);
      expect(await sessions.count()).toBe(before);

      const email = uniqueEmail('forged');
      await signedInPerson(t, { email });
      // A token from another visitor's page, without that visitor's cookie: refused.
      const stolenToken = csrfTokenIn(views[0].text);
      const forged = await request(t.server)
        .post('/login')
        .type('form')
        .send({ _csrf: stolenToken, email, password: PASSWORD });
      expect(forged.status).toBe(403);
      // A visitor's own token no longer serves once signed in: it was bound to no session.
      const visitor = new WebClient(t.server);
      const guestToken = await visitor.csrfFrom('/login');
      expect((await visitor.login(email)).headers.location).toBe('/dashboard');
      expect((await visitor.post('/logout', guestToken)).status).toBe(403);
      expect((await visitor.get('/dashboard')).status).toBe(200);
    });

    it('should answer a code a few steps off exactly as any other wrong code', async () => {
      const person = await signedInPerson(t);
      const app = await turnOnTwoFactor(t, person);
      await atTheChallenge(person);
      const answers: string[] = [];
      for (const code of [
        app.code(-4),
        app.code(5),
        app.code(1) === '000000' ? '111111' : '000000',
      ]) {
        await person.client.submit(CHALLENGE, CHALLENGE, { code });
        const page = visibleText((await person.client.get(CHALLENGE)).text);
        answers.push(/That code[^.]*\./.exec(page)![0]);
      }
      expect(new Set(answers)).toEqual(new Set(['That code is not right.']));
    });

    it('should encode a subject that looks like an encoded-word, so it reads as it was written', async () => {
      const owner = await signedInPerson(t);
      const name = '=?utf-8?q?Evil=20Corp?=';
      const team = await createTeam(t.app, owner.user, name);
      const invitee = uniqueEmail('subject');
      await owner.client.submit(`/teams/${team.id}`, `/teams/${team.id}/invitations`, {
        email: invitee,
        role: 'member',
      });
      const mail = await t.mail.waitFor({ to: invitee });
      expect(mail.subject).toBe(`You are invited to join ${name} on Tessera`);
    });
  });
});
