import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import request from 'supertest';
import { In, Like } from 'typeorm';
import { AuditEvent } from '../src/audit/audit-event.entity.js';
import { AuditLog } from '../src/audit/audit-log.js';
import { Actors } from '../src/common/actor.js';
import { PasswordChangeService } from '../src/account/password-change.service.js';
import { ProfileService } from '../src/account/profile.service.js';
import { OutboxMessage } from '../src/mail/outbox-message.entity.js';
import { OneTimeLink } from '../src/one-time-links/one-time-link.entity.js';
import { TeamsService } from '../src/teams/teams.service.js';
import { Session } from '../src/auth/session.entity.js';
import { ManualClock } from '../src/clock/clock.js';
import { TeamMember } from '../src/teams/team-member.entity.js';
import { Team } from '../src/teams/team.entity.js';
import { PersonalAccessToken } from '../src/tokens/personal-access-token.entity.js';
import { User } from '../src/users/user.entity.js';
import { addMember, createTeam, createToken, createUser, uniqueEmail } from './factories/index.js';
import { burst } from './support/burst.js';
import { sessionIdOf, visibleText } from './support/html.js';
import { pauseNextCall, renameHeld } from './support/pause.js';
import { startInstances, type Instances } from './support/instances.js';
import {
  addressChangeLink,
  PASSWORD,
  signedInPerson,
  type SignedInPerson,
} from './support/people.js';
import { forgetPasswordConfirmation } from './support/sessions.js';
import { retriedAfter } from './support/mail-retries.js';
import { TestSmtpServer } from './support/smtp-server.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import {
  recoveryCodesOf,
  totpCodeAt,
  totpSecretIn,
  turnOnTwoFactorOnPages,
} from './support/two-factor.js';
import { WebClient } from './support/web-client.js';

const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const SAFARI_IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const NEW_PASSWORD = 'a brand new password';

describe('account settings', () => {
  let t: TestApp;
  const clock = new ManualClock();

  beforeAll(async () => {
    // Sign-in limits as in production: the current password is checked under them.
    t = await createTestApp({}, { clock });
  });
  afterAll(async () => {
    await t.close();
  });

  const sessionsOf = (userId: number) => t.dataSource.getRepository(Session).findBy({ userId });
  const cookieOf = (res: request.Response, client: WebClient) => client.sessionCookie(res)!;

  /** The same person signed in from another browser, with its own user agent. */
  async function anotherBrowser(person: SignedInPerson, userAgent = SAFARI_IPHONE) {
    const client = new WebClient(t.server, t.mail);
    client.agent.set('User-Agent', userAgent);
    const res = await client.login(person.email, PASSWORD);
    expect(`${res.status} ${res.headers.location}`).toBe('303 /dashboard');
    return { client, sid: sessionIdOf(cookieOf(res, client)) };
  }

  const signedIn = async (client: WebClient) => (await client.get('/dashboard')).status === 200;

  describe('the menu', () => {
    it('should offer the Account Settings pages in the header of every signed-in page, beside the team switcher', async () => {
      const person = await signedInPerson(t);
      for (const page of ['/dashboard', '/teams', '/settings/profile', '/settings/sessions']) {
        const html = (await person.client.get(page)).text;
        const menu = /<details class="header-menu account-menu">([\s\S]*?)<\/details>/.exec(html);
        expect(menu).not.toBeNull();
        expect([...menu![1].matchAll(/href="([^"]+)"/g)].map((m) => m[1])).toEqual([
          '/settings/profile',
          '/settings/security',
          '/settings/sessions',
          '/settings/api-tokens',
          '/settings/security-log',
        ]);
        expect(html).toContain('class="team-switcher"');
        expect(html).toContain('action="/logout"');
      }
    });

    it('should lead /settings to its first section, and a visitor to sign in first', async () => {
      const person = await signedInPerson(t);
      for (const path of ['/settings', '/settings/']) {
        expect((await person.client.get(path)).headers.location).toBe('/settings/profile');
      }
      expect((await request(t.server).get('/settings')).headers.location).toBe(
        '/login?return_to=%2Fsettings',
      );
    });

    it('should name Account Settings once on each settings page, beside the header menu', async () => {
      const person = await signedInPerson(t);
      for (const page of ['/settings/profile', '/settings/security', '/settings/api-tokens']) {
        const main = (await person.client.get(page)).text.split('<main')[1];
        expect(visibleText(main).match(/Account Settings/g)).toHaveLength(1);
      }
    });
  });

  describe('changing the password', () => {
    it('should refuse a wrong current password on the form, keeping nothing typed', async () => {
      const person = await signedInPerson(t);
      const res = await person.client.submit('/settings/password', '/settings/password', {
        current_password: 'not my password',
        password: NEW_PASSWORD,
        password_confirmation: NEW_PASSWORD,
      });
      expect(`${res.status} ${res.headers.location}`).toBe('303 /settings/password');
      const page = (await person.client.get('/settings/password')).text;
      expect(visibleText(page)).toContain('That is not your password.');
      expect(page).not.toContain('not my password');
      expect(page).not.toContain(NEW_PASSWORD);
      const user = await t.dataSource.getRepository(User).findOneByOrFail({ id: person.user.id });
      expect(user.passwordHash).toBe(person.user.passwordHash);
    });

    it('should say which new-password field is wrong', async () => {
      const person = await signedInPerson(t);
      await person.client.submit('/settings/password', '/settings/password', {
        current_password: PASSWORD,
        password: 'short',
        password_confirmation: 'different',
      });
      const text = await person.client.textOf('/settings/password');
      expect(text).toContain('Password must be 8 to 1024 characters.');
      expect(text).toContain('The passwords do not match.');
    });

    it('should report a wrong current password and mismatched new ones at once, changing nothing', async () => {
      const person = await signedInPerson(t);
      const res = await person.client.submit('/settings/password', '/settings/password', {
        current_password: 'not my password',
        password: 'a fine new password',
        password_confirmation: 'another new password',
      });
      expect(res.headers.location).toBe('/settings/password');
      const text = await person.client.textOf('/settings/password');
      expect(text).toContain('That is not your password.');
      expect(text).toContain('The passwords do not match.');
      const user = await t.dataSource.getRepository(User).findOneByOrFail({ id: person.user.id });
      expect(user.passwordHash).toBe(person.user.passwordHash);
    });

    it('should keep this session, sign out every other one, and send the notice', async () => {
      const person = await signedInPerson(t);
      const other = await anotherBrowser(person);
      const res = await person.client.submit('/settings/password', '/settings/password', {
        current_password: PASSWORD,
        password: NEW_PASSWORD,
        password_confirmation: NEW_PASSWORD,
      });
      expect(`${res.status} ${res.headers.location}`).toBe('303 /settings/security');
      expect(await person.client.textOf('/settings/security')).toContain(
        'Your password has been changed. Every other session of your account was signed out.',
      );
      expect(await signedIn(person.client)).toBe(true);
      expect(await signedIn(other.client)).toBe(false);
      const rows = await sessionsOf(person.user.id);
      expect(rows).toHaveLength(1);
      expect(rows[0].id).not.toBe(other.sid);

      const mail = await t.mail.waitFor({
        to: person.email,
        subject: 'Your Tessera password was changed',
      });
      expect(mail.text).toContain('every other session of the account was signed out');

      const fresh = new WebClient(t.server, t.mail);
      expect((await fresh.login(person.email, PASSWORD)).headers.location).toBe('/login');
      expect((await fresh.login(person.email, NEW_PASSWORD)).headers.location).toBe('/dashboard');
    });
  });

  describe('one session, its requests overlapping', () => {
    it('should keep the session signed in through a password change, for a page read between the change and its answer, and for a form that read the session before it', async () => {
      const person = await signedInPerson(t);
      const passwords = t.app.get(PasswordChangeService);
      const change = passwords.change.bind(passwords);
      let between: number | undefined;
      // A page of the same session read once the change is made, before its answer.
      jest.spyOn(passwords, 'change').mockImplementationOnce(async (...args) => {
        const stamp = await change(...args);
        between = (await person.client.get('/dashboard')).status;
        return stamp;
      });
      const rename = await renameHeld(t, person);
      try {
        const res = await person.client.submit('/settings/password', '/settings/password', {
          current_password: PASSWORD,
          password: NEW_PASSWORD,
          password_confirmation: NEW_PASSWORD,
        });
        expect(`${res.status} ${res.headers.location}`).toBe('303 /settings/security');
        expect(between).toBe(200);
        expect(await signedIn(person.client)).toBe(true);
        expect((await rename.finish()).status).toBe(303);
      } finally {
        // Never left waiting, whatever failed: the app closes once its requests have answered.
        await rename.finish();
        jest.restoreAllMocks();
      }
      expect(await signedIn(person.client)).toBe(true);
      expect(await person.client.textOf('/settings/profile')).toContain('Renamed Meanwhile');
      expect(await sessionsOf(person.user.id)).toHaveLength(1);
    });

    it('should show the messages of two forms of one session that were under way together', async () => {
      const person = await signedInPerson(t);
      const rename = await renameHeld(t, person);
      try {
        const made = await person.client.submit('/teams', '/teams', { name: 'Made Together' });
        expect(made.status).toBe(303);
        expect((await rename.finish()).status).toBe(303);
      } finally {
        await rename.finish();
        jest.restoreAllMocks();
      }
      const shown = await person.client.textOf('/dashboard');
      expect(shown).toContain('Team "Made Together" was created');
      expect(shown).toContain('Your profile has been saved.');
    });

    it('should keep a two-factor setup begun while a form of the same session that read it before was under way', async () => {
      const person = await signedInPerson(t);
      const rename = await renameHeld(t, person);
      let secret: string | undefined;
      try {
        secret = totpSecretIn(
          (await person.client.submit('/settings/security', '/settings/two-factor')).text,
        );
        expect((await rename.finish()).status).toBe(303);
      } finally {
        await rename.finish();
        jest.restoreAllMocks();
      }
      // The code of the secret shown turns two-factor sign-in on: the setup was not lost.
      const done = await person.client.submit(
        '/settings/two-factor',
        '/settings/two-factor/confirm',
        { code: totpCodeAt(t, secret!) },
      );
      expect(recoveryCodesOf(done.text)).toHaveLength(10);
      expect(await person.client.textOf('/settings/profile')).toContain('Renamed Meanwhile');
    });
  });

  describe('one session, its messages and its damaged data', () => {
    it('should keep a message left while a page of the same session showed an older one', async () => {
      const person = await signedInPerson(t);
      // A message waiting: the rename's, its redirect not followed.
      const csrf = await person.client.csrfFrom('/settings/profile');
      const renamed = await person.client.post('/settings/profile', csrf, {
        name: 'Renamed Once',
        email: person.email,
      });
      expect(renamed.status).toBe(303);
      // A page that takes that message, then waits while another request leaves a new one.
      const { reached, release } = pauseNextCall(t.app.get(ProfileService), 'pendingChange');
      const page = person.client.get('/settings/profile').then((res) => res);
      try {
        await Promise.race([reached, page]);
        const made = await person.client.submit('/teams', '/teams', { name: 'Made Meanwhile' });
        expect(made.status).toBe(303);
        release();
        expect(visibleText((await page).text)).toContain('Your profile has been saved.');
      } finally {
        release();
        await page;
        jest.restoreAllMocks();
      }
      // The team's message was left after the page read the session: it is still to be shown.
      expect(await person.client.textOf('/dashboard')).toContain(
        'Team "Made Meanwhile" was created',
      );
    });

    it('should take a session whose stored data is not a JSON object for no session, not fail every page', async () => {
      for (const damaged of ['{', 'null', '"x"', '[]']) {
        const person = await signedInPerson(t);
        const [row] = await sessionsOf(person.user.id);
        await t.dataSource.getRepository(Session).update({ id: row.id }, { data: damaged });
        const dashboard = await person.client.get('/dashboard');
        expect([damaged, dashboard.status, dashboard.headers.location]).toEqual([
          damaged,
          303,
          '/login?session_ended=1',
        ]);
        expect((await person.client.get('/login')).status).toBe(200);
      }
    });
  });

  describe('browser sessions', () => {
    it("should list each of the account's sessions with its browser, system, address and last activity, never its id", async () => {
      const person = await signedInPerson(t);
      const phone = await anotherBrowser(person, SAFARI_IPHONE);
      const laptop = await anotherBrowser(person, FIREFOX_LINUX);
      const page = await laptop.client.get('/settings/sessions');
      const text = visibleText(page.text);
      expect(text).toContain('Mobile Safari 17 on iOS 17');
      // This browser first; times as people say them, the exact one on hover.
      expect(text).toMatch(
        /^.*Signed-in browsers Firefox 128 on Linux This device 127\.0\.0\.1 · last active (just now|1 minute ago) /,
      );
      expect(page.text).toMatch(
        /last active <time datetime="\d{4}-\d\d-\d\dT[\d:.]+Z" title="\d{4}-\d\d-\d\d \d\d:\d\d UTC">/,
      );
      expect(page.text.match(/data-session="/g)).toHaveLength(3);
      for (const row of await sessionsOf(person.user.id)) {
        expect(page.text).not.toContain(row.id);
        expect(row.ip).toBe('127.0.0.1');
        expect(row.lastActiveAt).toBeInstanceOf(Date);
      }
      expect(page.text).not.toContain(phone.sid);
      // This device has no revoke button: signing out is how it ends.
      expect(page.text.match(/\/revoke"/g)).toHaveLength(2);
    });

    it('should write the activity at most once a minute, not on every page', async () => {
      const person = await signedInPerson(t);
      await person.client.get('/dashboard');
      const [before] = await sessionsOf(person.user.id);
      t.queries.clear();
      for (let i = 0; i < 3; i++) await person.client.get('/dashboard');
      // Only the store's conditional expiry touch (itself written at most once a minute) runs.
      const writes = t.queries.queries.filter(
        (q) =>
          /^(INSERT|UPDATE)[\s\S]*sessions/i.test(q.trimStart()) &&
          !/^UPDATE [`"]?sessions[`"]? SET [`"]?expires_at[`"]? = \S+ WHERE/i.test(q.trimStart()),
      );
      expect(writes).toEqual([]);
      const [unchanged] = await sessionsOf(person.user.id);
      expect(unchanged.lastActiveAt).toEqual(before.lastActiveAt);

      // A minute later, the next page writes it once.
      clock.advance(61_000);
      // Stored with its milliseconds, on every database.
      const visited = clock.nowMs();
      await person.client.get('/dashboard');
      await person.client.get('/dashboard');
      const [after] = await sessionsOf(person.user.id);
      expect(after.lastActiveAt!.getTime()).toBeGreaterThanOrEqual(visited);
      expect(after.lastActiveAt!.getTime()).toBeLessThanOrEqual(clock.nowMs());
    });

    it("should sign out one other session by its handle, and answer 404 for another person's", async () => {
      const person = await signedInPerson(t);
      const phone = await anotherBrowser(person);
      const stranger = await signedInPerson(t);
      const strangerHandle = /data-session="([^"]+)"/.exec(
        (await stranger.client.get('/settings/sessions')).text,
      )![1];

      const page = (await person.client.get('/settings/sessions')).text;
      const handles = [...page.matchAll(/action="\/settings\/sessions\/([^/]+)\/revoke"/g)];
      expect(handles).toHaveLength(1);

      const foreign = await person.client.submit(
        '/settings/sessions',
        `/settings/sessions/${strangerHandle}/revoke`,
      );
      expect(foreign.status).toBe(404);
      const rawId = await person.client.submit(
        '/settings/sessions',
        `/settings/sessions/${phone.sid}/revoke`,
      );
      expect(rawId.status).toBe(404);
      expect(await signedIn(stranger.client)).toBe(true);
      expect(await signedIn(phone.client)).toBe(true);

      const res = await person.client.submit(
        '/settings/sessions',
        `/settings/sessions/${handles[0][1]}/revoke`,
      );
      expect(`${res.status} ${res.headers.location}`).toBe('303 /settings/sessions');
      expect(await signedIn(phone.client)).toBe(false);
      expect(await signedIn(person.client)).toBe(true);
      expect(await sessionsOf(person.user.id)).toHaveLength(1);
    });

    it('should sign out every other session once the password is typed', async () => {
      const person = await signedInPerson(t);
      const phone = await anotherBrowser(person);
      const laptop = await anotherBrowser(person, FIREFOX_LINUX);
      const wrong = await person.client.submit(
        '/settings/sessions',
        '/settings/sessions/revoke-others',
        { password: 'not my password' },
      );
      expect(wrong.headers.location).toBe('/settings/sessions');
      expect(await person.client.textOf('/settings/sessions')).toContain(
        'That is not your password.',
      );
      expect(await sessionsOf(person.user.id)).toHaveLength(3);

      await person.client.submit('/settings/sessions', '/settings/sessions/revoke-others', {
        password: PASSWORD,
      });
      expect(await person.client.textOf('/settings/sessions')).toContain(
        '2 other sessions have been signed out.',
      );
      expect(await signedIn(phone.client)).toBe(false);
      expect(await signedIn(laptop.client)).toBe(false);
      expect(await signedIn(person.client)).toBe(true);
      expect(await sessionsOf(person.user.id)).toHaveLength(1);
      // The phone, still open on a page, is told its session ended on the way to sign in again.
      const asked = await phone.client.get('/settings/api-tokens');
      expect(asked.headers.location).toBe(
        '/login?return_to=%2Fsettings%2Fapi-tokens&session_ended=1',
      );
      expect(await phone.client.textOf(asked.headers.location)).toContain(
        'Your session has ended. Sign in again to go on.',
      );
    });
  });

  describe('deleting the account', () => {
    it('should refuse while the person owns a team with other members, and change nothing', async () => {
      const person = await signedInPerson(t);
      const team = await createTeam(t.app, person.user, 'Shared Crew');
      const colleague = await createUser(t.app, { name: 'Colleague' });
      await addMember(t.app, team.id, colleague);

      const res = await person.client.submit('/settings/profile', '/settings/account/delete', {
        password: PASSWORD,
      });
      expect(res.headers.location).toBe('/settings/profile');
      expect(await person.client.textOf('/settings/profile')).toContain(
        'You own the team Shared Crew, which has other members or service accounts. Transfer it to another member or delete it first, then delete your account.',
      );
      expect(await t.dataSource.getRepository(User).countBy({ id: person.user.id })).toBe(1);
      expect(await t.dataSource.getRepository(Team).countBy({ ownerId: person.user.id })).toBe(2);
      expect(await signedIn(person.client)).toBe(true);
    });

    it('should always ask for the password, even just after typing it', async () => {
      const person = await signedInPerson(t);
      const res = await person.client.submit('/settings/profile', '/settings/account/delete', {
        password: 'not my password',
      });
      expect(res.headers.location).toBe('/settings/profile');
      expect(await person.client.textOf('/settings/profile')).toContain(
        'That is not your password.',
      );
      expect(await t.dataSource.getRepository(User).countBy({ id: person.user.id })).toBe(1);
    });

    it('should revoke every token, end every session, remove every membership and the personal team, then say goodbye', async () => {
      const person = await signedInPerson(t);
      const phone = await anotherBrowser(person);
      const { plaintext } = await createToken(t.app, person.user);
      const owner = await createUser(t.app, { name: 'Team Owner' });
      const theirs = await createTeam(t.app, owner, 'Their Team');
      await addMember(t.app, theirs.id, person.user);
      const solo = await createTeam(t.app, person.user, 'Solo Project');
      const personalTeamId = person.user.currentTeamId!;

      const res = await person.client.submit('/settings/profile', '/settings/account/delete', {
        password: PASSWORD,
      });
      expect(`${res.status} ${res.headers.location}`).toBe('303 /login');
      expect(await person.client.textOf('/login')).toContain(
        'Your account has been deleted. Goodbye.',
      );
      expect(await signedIn(person.client)).toBe(false);
      expect(await signedIn(phone.client)).toBe(false);

      const userId = person.user.id;
      expect(await t.dataSource.getRepository(User).countBy({ id: userId })).toBe(0);
      expect(await sessionsOf(userId)).toEqual([]);
      expect(await t.dataSource.getRepository(PersonalAccessToken).countBy({ userId })).toBe(0);
      expect(await t.dataSource.getRepository(TeamMember).countBy({ userId })).toBe(0);
      const teams = t.dataSource.getRepository(Team);
      expect(await teams.countBy({ id: personalTeamId })).toBe(0);
      expect(await teams.countBy({ id: solo.id })).toBe(0);
      expect(await teams.countBy({ id: theirs.id })).toBe(1);
      const api = await request(t.server)
        .get('/api/v1/user/profile')
        .set('Authorization', `Bearer ${plaintext}`);
      expect(api.status).toBe(401);
      expect((await new WebClient(t.server).login(person.email, PASSWORD)).headers.location).toBe(
        '/login',
      );
    });
  });

  describe('deleting the account of a team member', () => {
    it("should leave a 'left' event in each team the person was in and mail its owner, and nothing when the deletion is refused", async () => {
      const person = await signedInPerson(t, { name: 'Departing Member' });
      const owners = await Promise.all(
        ['First Owner', 'Second Owner'].map((name) =>
          createUser(t.app, { name, email: uniqueEmail('owner') }),
        ),
      );
      const teams = await Promise.all(
        owners.map((owner, i) => createTeam(t.app, owner, `Joined Team ${i + 1}`)),
      );
      for (const team of teams) await addMember(t.app, team.id, person.user);
      const leftEvents = () =>
        t.dataSource.getRepository(AuditEvent).findBy({
          event: 'team.member_left',
          userId: person.user.id,
        });

      // Refused (they own a team with another member): no event, no mail.
      const shared = await createTeam(t.app, person.user, 'Kept Crew');
      await addMember(t.app, shared.id, owners[0]);
      await person.client.submit('/settings/profile', '/settings/account/delete', {
        password: PASSWORD,
      });
      expect(await t.dataSource.getRepository(User).countBy({ id: person.user.id })).toBe(1);
      await t.app.get(AuditLog).flush();
      expect(await leftEvents()).toEqual([]);
      expect(
        await t.dataSource.getRepository(OutboxMessage).countBy({
          recipient: In(owners.map((o) => o.email)),
          params: Like('%member-deleted-account%'),
        }),
      ).toBe(0);

      await t.app.get(TeamsService).deleteTeam(Actors.operator(person.user.id), shared.id);
      const res = await person.client.submit('/settings/profile', '/settings/account/delete', {
        password: PASSWORD,
      });
      expect(`${res.status} ${res.headers.location}`).toBe('303 /login');

      for (const [i, owner] of owners.entries()) {
        const mail = await t.mail.waitFor({
          to: owner.email,
          subject: `Departing Member (${person.email}) left Joined Team ${i + 1}`,
        });
        expect(mail.text).toContain(
          `Departing Member (${person.email}) deleted their Tessera account and so left the team Joined Team ${i + 1}.`,
        );
      }
      await t.app.get(AuditLog).flush();
      const events = await leftEvents();
      expect(events.map((e) => [e.teamId, JSON.parse(e.detail!)]).sort()).toEqual(
        teams
          .map((team) => [
            team.id,
            { team: team.name, member: person.email, because: 'account deleted' },
          ])
          .sort(),
      );
      // In the team's own log, as its owner reads it (the token acts in Joined Team 1, current).
      const { plaintext } = await createToken(t.app, owners[0], { abilities: ['audit:read'] });
      const log = await request(t.server)
        .get('/api/v1/team/audit-log')
        .set('Authorization', `Bearer ${plaintext}`);
      expect(log.status).toBe(200);
      expect(log.body.data[0]).toMatchObject({ event: 'team.member_left' });
    });
  });

  describe('the profile', () => {
    it('should rename at once, and refuse a bad name with the typed values kept', async () => {
      const person = await signedInPerson(t, { name: 'Old Name' });
      const bad = await person.client.submit('/settings/profile', '/settings/profile', {
        name: '',
        email: 'not an address',
      });
      expect(bad.headers.location).toBe('/settings/profile');
      const page = (await person.client.get('/settings/profile')).text;
      expect(visibleText(page)).toContain('Enter your name.');
      expect(visibleText(page)).toContain('Enter a valid email address.');
      expect(page).toContain('value="not an address"');

      await person.client.submit('/settings/profile', '/settings/profile', {
        name: 'New Name',
        email: person.email,
      });
      expect(await person.client.textOf('/settings/profile')).toContain(
        'Your profile has been saved.',
      );
      const user = await t.dataSource.getRepository(User).findOneByOrFail({ id: person.user.id });
      expect(user.name).toBe('New Name');
    });

    it('should show a waiting change of address with Resend, which mails a new link, and Cancel', async () => {
      const person = await signedInPerson(t);
      const newEmail = uniqueEmail('waiting');
      const first = await addressChangeLink(t, person, newEmail);
      const profile = await person.client.get('/settings/profile');
      expect(visibleText(profile.text)).toContain(
        `Waiting for confirmation: ${newEmail}. Follow the link we mailed there`,
      );
      expect(visibleText(profile.text)).toContain(`until then your address stays ${person.email}`);

      const resent = await person.client.submit(
        '/settings/profile',
        '/settings/profile/email-change/resend',
      );
      expect(resent.headers.location).toBe('/settings/profile');
      expect(await person.client.textOf('/settings/profile')).toContain(
        'A new link is on its way to the new address',
      );
      const mails = await t.mail.waitForCount(
        { to: newEmail, subject: 'Confirm your new email address' },
        2,
      );
      const second = TestSmtpServer.linkPath(mails.at(-1)!, '/settings/profile/email/');
      expect(second).not.toBe(first);
      expect((await person.client.get(first)).status).toBe(404);
      expect((await person.client.get(second)).status).toBe(200);

      await person.client.submit('/settings/profile', '/settings/profile/email-change/cancel');
      const after = await person.client.textOf('/settings/profile');
      expect(after).toContain('The change of address is cancelled: its link no longer works.');
      expect(after).not.toContain('Waiting for confirmation');
      expect((await person.client.get(second)).status).toBe(404);
      // Nothing waits any more: both say so and change nothing.
      for (const action of ['resend', 'cancel']) {
        await person.client.submit('/settings/profile', `/settings/profile/email-change/${action}`);
        expect(await person.client.textOf('/settings/profile')).toContain(
          'No change of address is waiting.',
        );
      }
      expect(t.mail.find({ to: newEmail })).toHaveLength(2);
    });

    /** The Profile form sent with a new address and the name unchanged. */
    const askForAddress = (person: SignedInPerson, email: string) =>
      person.client.submit('/settings/profile', '/settings/profile', {
        name: person.user.name,
        email,
      });

    it('should show a change as waiting before its mail goes out, and mail nothing once it is cancelled', async () => {
      const person = await signedInPerson(t);
      const newEmail = uniqueEmail('cancelled');
      const message = await retriedAfter(
        t,
        clock,
        newEmail,
        () => askForAddress(person, newEmail),
        async () => {
          expect(await person.client.textOf('/settings/profile')).toContain(
            `Waiting for confirmation: ${newEmail}.`,
          );
          await person.client.submit('/settings/profile', '/settings/profile/email-change/cancel');
          expect(await person.client.textOf('/settings/profile')).toContain(
            'The change of address is cancelled: its link no longer works.',
          );
        },
      );
      expect(message.status).toBe('dropped');
      expect(t.mail.find({ to: newEmail })).toEqual([]);
      expect(
        await t.dataSource
          .getRepository(OneTimeLink)
          .countBy({ userId: person.user.id, purpose: 'change_email' }),
      ).toBe(0);
      expect(await person.client.textOf('/settings/profile')).not.toContain('Waiting');
    });

    it('should mail only the newest link of a change asked for again while the mail server was down', async () => {
      const person = await signedInPerson(t);
      const newEmail = uniqueEmail('again');
      const first = await retriedAfter(
        t,
        clock,
        newEmail,
        () => askForAddress(person, newEmail),
        () => person.client.submit('/settings/profile', '/settings/profile/email-change/resend'),
      );
      const mail = await t.mail.waitFor({
        to: newEmail,
        subject: 'Confirm your new email address',
      });
      expect(first.status).toBe('dropped');
      expect(t.mail.find({ to: newEmail })).toHaveLength(1);
      const link = TestSmtpServer.linkPath(mail, '/settings/profile/email/');
      await person.client.submit(link, link);
      expect(
        (await t.dataSource.getRepository(User).findOneByOrFail({ id: person.user.id })).email,
      ).toBe(newEmail);
    });

    it('should change the address only when the link mailed to it is followed, and tell the old one', async () => {
      const person = await signedInPerson(t);
      const newEmail = uniqueEmail('moved');
      const res = await person.client.submit('/settings/profile', '/settings/profile', {
        name: 'Moving Person',
        email: newEmail.toUpperCase(),
      });
      expect(res.headers.location).toBe('/settings/profile');
      // The new name, sent with it, is saved at once, and the page says both.
      expect(person.user.name).not.toBe('Moving Person');
      const told = await person.client.textOf('/settings/profile');
      expect(told).toContain('Your new name has been saved.');
      expect(told).toContain('follow the link we are mailing to the new one');
      const users = t.dataSource.getRepository(User);
      expect((await users.findOneByOrFail({ id: person.user.id })).name).toBe('Moving Person');
      expect((await users.findOneByOrFail({ id: person.user.id })).email).toBe(person.email);

      const mail = await t.mail.waitFor({
        to: newEmail,
        subject: 'Confirm your new email address',
      });
      const link = TestSmtpServer.linkPath(mail, '/settings/profile/email/');
      const token = await t.dataSource
        .getRepository(OneTimeLink)
        .findOneByOrFail({ userId: person.user.id, purpose: 'change_email' });
      expect(token.email).toBe(newEmail);
      expect(link).not.toContain(token.tokenHash);

      // Someone else signed in (the person's other account, most often) is told whose link it
      // is not, and how to go on; they learn nothing of that account and cannot use it.
      const stranger = await signedInPerson(t);
      const elsewhere = await stranger.client.get(link);
      expect(elsewhere.status).toBe(200);
      const said = visibleText(elsewhere.text);
      expect(said).toContain(
        `This link changes the address of another account. You are signed in as ${stranger.email}`,
      );
      expect(said).toContain('sign out, then open the link again');
      expect(elsewhere.text).not.toContain(newEmail);
      expect(elsewhere.text).not.toContain(person.email);
      expect(elsewhere.text).not.toContain('Use this address');
      expect((await stranger.client.submit(link, link)).status).toBe(404);
      expect((await users.findOneByOrFail({ id: person.user.id })).email).toBe(person.email);

      // Opening it asks first; the button changes the address.
      const opened = await person.client.get(link);
      expect(opened.status).toBe(200);
      expect(visibleText(opened.text)).toContain(`Use ${newEmail} as the address of your account`);
      expect((await users.findOneByOrFail({ id: person.user.id })).email).toBe(person.email);
      const followed = await person.client.submit(link, link);
      expect(`${followed.status} ${followed.headers.location}`).toBe('303 /settings/profile');
      const user = await users.findOneByOrFail({ id: person.user.id });
      expect(user.email).toBe(newEmail);
      expect(user.emailVerifiedAt).toBeInstanceOf(Date);
      expect((await person.client.get(link)).status).toBe(410);

      const notice = await t.mail.waitFor({
        to: person.email,
        subject: 'The email address of your Tessera account was changed',
      });
      expect(notice.text).toContain('no longer comes to this address');
      const fresh = new WebClient(t.server, t.mail);
      expect((await fresh.login(newEmail, PASSWORD)).headers.location).toBe('/dashboard');
    });

    it('should ask for the password again before changing the address after 15 minutes, then go on', async () => {
      const person = await signedInPerson(t);
      forgetPasswordConfirmation(clock);
      const newEmail = uniqueEmail('sudo');
      const res = await person.client.submit('/settings/profile', '/settings/profile', {
        name: 'Someone Else',
        email: newEmail,
      });
      expect(res.headers.location).toBe('/confirm-password?return_to=%2Fsettings%2Fprofile');
      expect(await person.client.textOf(res.headers.location)).toContain(
        'Waiting for your password: Change your email address',
      );
      const before = await t.dataSource.getRepository(User).findOneByOrFail({ id: person.user.id });
      expect(before.name).not.toBe('Someone Else');

      // A wrong password first: the page still names what waits.
      const wrong = await person.client.submit(res.headers.location, '/confirm-password', {
        password: 'not the password',
        return_to: '/settings/profile',
      });
      expect(wrong.headers.location).toBe(res.headers.location);
      const again = await person.client.textOf(wrong.headers.location);
      expect(again).toContain('Waiting for your password: Change your email address');
      expect(again).toContain('That is not your password.');

      const confirmed = await person.client.submit(res.headers.location, '/confirm-password', {
        password: PASSWORD,
        return_to: '/settings/profile',
      });
      expect(confirmed.headers.location).toBe('/confirm-password/continue');
      const done = await person.client.resume();
      expect(done.headers.location).toBe('/settings/profile');
      expect(await person.client.textOf('/settings/profile')).toContain(
        'follow the link we are mailing to the new one',
      );
      await t.mail.waitFor({ to: newEmail, subject: 'Confirm your new email address' });
      const after = await t.dataSource.getRepository(User).findOneByOrFail({ id: person.user.id });
      expect(after.name).toBe('Someone Else');
      // Sent once: the continue page offers nothing more.
      expect(await person.client.textOf('/confirm-password/continue')).toContain(
        'No action is waiting for your password',
      );
    });

    it('should save a new name at once, without asking for the password', async () => {
      const person = await signedInPerson(t);
      forgetPasswordConfirmation(clock);
      const res = await person.client.submit('/settings/profile', '/settings/profile', {
        name: 'Renamed Without Password',
        email: person.email,
      });
      expect(res.headers.location).toBe('/settings/profile');
      expect(await person.client.textOf('/settings/profile')).toContain(
        'Your profile has been saved.',
      );
      const after = await t.dataSource.getRepository(User).findOneByOrFail({ id: person.user.id });
      expect(after.name).toBe('Renamed Without Password');
    });

    it('should send no link for an address another account has, with the same answer', async () => {
      const person = await signedInPerson(t);
      const taken = await createUser(t.app, { name: 'Has It' });
      const res = await person.client.submit('/settings/profile', '/settings/profile', {
        name: 'Squatter',
        email: taken.email,
      });
      expect(res.headers.location).toBe('/settings/profile');
      expect(await person.client.textOf('/settings/profile')).toContain(
        'follow the link we are mailing to the new one',
      );
      await expect(
        t.mail.waitFor({ to: taken.email, subject: 'Confirm your new email address' }, 1500),
      ).rejects.toThrow('no mail');
    });

    it("should change an address only when the link's page is posted, whoever opens the link first", async () => {
      const person = await signedInPerson(t);
      const newEmail = uniqueEmail('moving');
      const link = await addressChangeLink(t, person, newEmail);
      const mail = t.mail.find({ to: newEmail, subject: 'Confirm your new email address' })[0];
      expect(mail.text).not.toContain(person.user.name);
      expect((await request(t.server).get(link)).headers.location).toMatch(/^\/login/);
      expect((await person.client.get(link)).status).toBe(200);
      expect(
        (await t.dataSource.getRepository(User).findOneByOrFail({ id: person.user.id })).email,
      ).toBe(person.email);
      expect((await person.client.submit(link, link)).headers.location).toBe('/settings/profile');
      expect(
        (await t.dataSource.getRepository(User).findOneByOrFail({ id: person.user.id })).email,
      ).toBe(newEmail);
    });
  });

  describe('sudo mode', () => {
    const teamsOf = (userId: number) =>
      t.dataSource.getRepository(Team).countBy({ ownerId: userId });

    /** Asks to delete a team with the password typed too long ago: the action waits. */
    async function deletionWaiting(person: SignedInPerson, teamId: number) {
      forgetPasswordConfirmation(clock);
      const asked = await person.client.submit(`/teams/${teamId}`, `/teams/${teamId}/delete`);
      expect(asked.headers.location).toBe(
        `/confirm-password?return_to=${encodeURIComponent(`/teams/${teamId}`)}`,
      );
      expect(await person.client.textOf(asked.headers.location)).toContain(
        'Waiting for your password: Delete the team',
      );
      return asked.headers.location;
    }
    const confirmFor = (person: SignedInPerson, returnTo: string) =>
      person.client.submit(
        `/confirm-password?return_to=${encodeURIComponent(returnTo)}`,
        '/confirm-password',
        { password: PASSWORD, return_to: returnTo },
      );

    it('should drop an abandoned action when the password is confirmed for something else, so no link can send it', async () => {
      const person = await signedInPerson(t);
      const team = await createTeam(t.app, person.user, 'Abandoned');
      const before = await teamsOf(person.user.id);
      await deletionWaiting(person, team.id);

      // The person goes elsewhere and confirms the password for another page.
      const other = await confirmFor(person, '/settings/api-tokens');
      expect(other.headers.location).toBe('/settings/api-tokens');

      // A link from another site to the continue page: refused, and nothing is sent.
      const crossSite = await person.client
        .get('/confirm-password/continue')
        .set('Sec-Fetch-Site', 'cross-site');
      expect(crossSite.status).toBe(403);
      expect(visibleText(crossSite.text)).toContain(
        'Tessera goes on with an action you confirmed only when its own pages lead here',
      );
      expect(crossSite.text).not.toContain('data-resume');
      // Nor from Tessera's own pages: the deletion was never confirmed, and is gone.
      expect(await person.client.textOf('/confirm-password/continue')).toContain(
        'No action is waiting for your password',
      );
      expect(await teamsOf(person.user.id)).toBe(before);
    });

    it('should send the action confirmed for once, and only where Tessera itself leads', async () => {
      const person = await signedInPerson(t);
      const team = await createTeam(t.app, person.user, 'Confirmed');
      const before = await teamsOf(person.user.id);

      // Confirmed for, then opened from another site, or by a client that says nowhere: dropped.
      for (const site of ['cross-site', 'same-site', undefined]) {
        await deletionWaiting(person, team.id);
        expect((await confirmFor(person, `/teams/${team.id}`)).headers.location).toBe(
          '/confirm-password/continue',
        );
        const opened = person.client.get('/confirm-password/continue');
        const page = await (site
          ? opened.set('Sec-Fetch-Site', site)
          : opened.unset('Sec-Fetch-Site'));
        expect(page.status).toBe(403);
        expect(page.text).not.toContain('data-resume');
        expect(await person.client.textOf('/confirm-password/continue')).toContain(
          'No action is waiting for your password',
        );
        expect(await teamsOf(person.user.id)).toBe(before);
      }

      // From the confirmation itself: shown once, and the team deleted by the form it posts.
      await deletionWaiting(person, team.id);
      await confirmFor(person, `/teams/${team.id}`);
      const done = await person.client.resume();
      expect(done.headers.location).toBe('/teams');
      expect(await teamsOf(person.user.id)).toBe(before - 1);
      expect(await person.client.textOf('/confirm-password/continue')).toContain(
        'No action is waiting for your password',
      );
    });
  });

  describe('two-factor sign-in and security notices', () => {
    it('should refuse to turn two-factor sign-in on before the address is confirmed', async () => {
      const email = uniqueEmail('unconfirmed');
      await createUser(t.app, { email, password: PASSWORD, verified: false });
      const client = new WebClient(t.server, t.mail);
      await client.login(email, PASSWORD);
      // The page says what to do first, and offers the link again instead of the setup.
      const page = await client.get('/settings/security');
      expect(visibleText(page.text)).toContain('Confirm your email address first.');
      expect(page.text).not.toContain('Turn on two-factor sign-in');
      const resent = await client.submit('/settings/security', '/verify-email/resend', {
        return_to: '/settings/security',
      });
      expect(resent.headers.location).toBe('/settings/security');
      expect(await client.textOf('/settings/security')).toContain(
        'A new confirmation link is on its way.',
      );
      await t.mail.waitFor({ to: email, subject: 'Confirm your email address' });

      const res = await client.submit('/settings/security', '/settings/two-factor');
      expect(res.status).toBe(403);
      expect(visibleText(res.text)).toContain(
        'Confirm your email address before turning on two-factor sign-in',
      );
    });

    it('should mail a notice when two-factor sign-in is turned on and off, and when a token is created', async () => {
      const person = await signedInPerson(t);
      await turnOnTwoFactorOnPages(t, person);
      await t.mail.waitFor({ to: person.email, subject: 'Two-factor sign-in was turned on' });
      await person.client.submit('/settings/security', '/settings/two-factor/disable');
      await t.mail.waitFor({ to: person.email, subject: 'Two-factor sign-in was turned off' });

      await person.client.submit('/settings/api-tokens', '/settings/api-tokens', {
        name: 'Deploy bot',
        abilities: ['user:read'],
      });
      const mail = await t.mail.waitFor({
        to: person.email,
        subject: 'A new API token was created',
      });
      expect(mail.text).toContain('A new API token named "Deploy bot" was created');
      expect(mail.raw).not.toMatch(/tsr_[0-9A-Za-z]{36}/);
    });
  });
});

describe.each([
  ['one instance', 1],
  ['two instances', 2],
])('a session signed out from the Sessions page: %s', (_name, count) => {
  let instances: Instances;

  beforeAll(async () => {
    instances = await startInstances(count, { RATE_LIMIT_ENABLED: 'false' });
  });
  afterAll(async () => {
    await instances?.close();
  });

  it('should not bring a revoked session back when requests of its own were in flight', async () => {
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
        expect((await client.get('/dashboard')).headers.location).toBe('/login?session_ended=1');
      }
      expect((await owner.client.get('/dashboard')).status).toBe(200);
    }
  });
});
