import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { AuthService } from '../src/auth/auth.service.js';
import { PasswordResetService } from '../src/password-reset/password-reset.service.js';
import request from 'supertest';
import { Session } from '../src/auth/session.entity.js';
import { SessionsRepository } from '../src/auth/sessions.repository.js';
import { GUEST_SESSION_MS } from '../src/web/session/web-session.js';
import { ManualClock } from '../src/clock/clock.js';
import { Team } from '../src/teams/team.entity.js';
import { User } from '../src/users/user.entity.js';
import type { AddressInfo } from 'node:net';
import { IsNull, Not } from 'typeorm';
import { createUser, uniqueEmail } from './factories/index.js';
import { csrfTokenIn, sessionIdOf, visibleText } from './support/html.js';
import { burst } from './support/burst.js';
import { pauseNextCall } from './support/pause.js';
import { PASSWORD, signedInPerson } from './support/people.js';
import { TestSmtpServer } from './support/smtp-server.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { WebClient } from './support/web-client.js';

describe('sign-up, sign-in and sessions', () => {
  let t: TestApp;
  const clock = new ManualClock();
  const MINUTE_MS = 60_000;

  beforeAll(async () => {
    t = await createTestApp(
      { SESSION_IDLE_TIMEOUT_MINUTES: '30', SESSION_ABSOLUTE_TIMEOUT_HOURS: '1' },
      { clock },
    );
  });
  afterAll(async () => {
    await t.close();
  });

  const users = () => t.dataSource.getRepository(User);
  const web = () => new WebClient(t.server, t.mail);

  describe('GET /', () => {
    it('should send visitors to the sign-in page and signed-in people to their dashboard', async () => {
      const client = web();
      expect((await client.get('/')).headers.location).toBe('/login');
      await client.register('Ada Lovelace', uniqueEmail());
      expect((await client.get('/')).headers.location).toBe('/dashboard');
      const dashboard = await client.get('/dashboard');
      expect(dashboard.status).toBe(200);
      expect(visibleText(dashboard.text)).toContain('Welcome, Ada Lovelace');
      expect(visibleText(dashboard.text)).toContain("Current team Ada's Team");
    });

    it('should send a visitor who opens a signed-in page to the sign-in page', async () => {
      for (const path of ['/dashboard', '/settings/api-tokens', '/teams', '/teams/1']) {
        const res = await request(t.server).get(path);
        expect(res.status).toBe(303);
        expect(res.headers.location).toBe(
          path === '/dashboard' ? '/login' : `/login?return_to=${encodeURIComponent(path)}`,
        );
      }
    });
  });

  describe('registration', () => {
    it('should create the user with a personal team and a hashed password, and mail a link to confirm the address', async () => {
      const email = uniqueEmail('new');
      const client = web();
      const res = await client.submit('/register', '/register', {
        name: 'Grace Hopper',
        email: email.toUpperCase(),
        password: 'correct horse battery',
        password_confirmation: 'correct horse battery',
      });
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe('/register/check-email');
      const page = visibleText((await client.get(res.headers.location)).text);
      expect(page).toContain('Check your mail');
      // Not signed in: the answer is the same for a new address and a taken one.
      expect((await client.get('/dashboard')).headers.location).toBe('/login');

      const user = await users().findOneByOrFail({ email });
      expect(user.passwordHash).toMatch(/^\$argon2id\$v=19\$m=\d+,p=\d+,t=\d+\$/);
      const [, m, tCost] = /m=(\d+),p=\d+,t=(\d+)/.exec(user.passwordHash!)!;
      expect(Number(m) >= 19_456 && Number(tCost) >= 2).toBe(true);
      expect(user.currentTeamId).not.toBeNull();
      expect(user.emailVerifiedAt).toBeNull();

      const mail = await t.mail.waitFor({ to: email, subject: 'Confirm your email address' });
      expect(mail.text).toContain('Hello Grace Hopper');
      expect(mail.links[0]).toMatch(
        new RegExp(`^${t.config.app.publicUrl}/verify-email/[A-Za-z0-9_-]{43}$`),
      );
      expect((await client.login(email)).headers.location).toBe('/dashboard');
      expect((await client.get('/dashboard')).text).toContain('Grace Hopper');
    });

    it('should re-render the form with a message per field and the values kept, never the passwords', async () => {
      const client = web();
      const before = await users().count();
      const res = await client.submit('/register', '/register', {
        name: 'Alan 🧮',
        email: 'not-an-email',
        password: 'short',
        password_confirmation: 'different',
      });
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe('/register');

      const page = await client.get('/register');
      expect(page.text).toContain('Enter a valid email address.');
      expect(page.text).toContain('Password must be 8 to 1024 characters.');
      // One message about the password's length: the error, without the hint beside it.
      expect(page.text).not.toContain('At least 8 characters.');
      expect(page.text).toContain('The passwords do not match.');
      expect(page.text).toContain('value="Alan 🧮"');
      expect(page.text).toContain('value="not-an-email"');
      expect(page.text).not.toContain('short');
      expect(page.text).not.toContain('different');
      expect(await users().count()).toBe(before);

      const again = await client.get('/register');
      expect(again.text).not.toContain('Enter a valid email address.');

      // Valid addresses whose quotes or angle brackets a message's headers would rewrite, so
      // that the mail would go elsewhere than the address kept: refused, nothing mailed.
      for (const email of ['"<attacker@evil.test>"@example.com', '"a b"@example.com']) {
        await client.submit('/register', '/register', {
          name: 'Quoted',
          email,
          password: 'correct horse battery',
          password_confirmation: 'correct horse battery',
        });
        expect(visibleText((await client.get('/register')).text)).toContain(
          'Enter the address without quotes or angle brackets',
        );
      }
      // An address with an invisible character shows as another one: refused too.
      for (const email of ['zo\u200be@example.com', 'zoe\u202e@example.com']) {
        await client.submit('/register', '/register', {
          name: 'Invisible',
          email,
          password: 'correct horse battery',
          password_confirmation: 'correct horse battery',
        });
        expect(visibleText((await client.get('/register')).text)).toContain(
          'Enter the address without invisible or control characters',
        );
      }
      expect(await users().count()).toBe(before);
    });

    it('should answer a taken address, whatever its case, exactly as a new one, and tell its owner by mail', async () => {
      const taken = uniqueEmail('taken');
      await web().register('First Owner', taken);
      const fresh = uniqueEmail('fresh');
      const answers = [];
      for (const email of [taken.toUpperCase(), fresh]) {
        const client = web();
        const res = await client.submit('/register', '/register', {
          name: 'Second',
          email,
          password: 'another good password',
          password_confirmation: 'another good password',
        });
        const page = await client.get(res.headers.location);
        answers.push({
          status: res.status,
          location: res.headers.location,
          // Each page names the address typed; the rest must be the same.
          page: visibleText(page.text).replace(email.toLowerCase(), '<address>'),
        });
      }
      expect(answers[0]).toEqual(answers[1]);
      expect(answers[0].page).not.toContain('An account with this email already exists.');

      expect(await users().countBy({ email: taken })).toBe(1);
      const owner = await users().findOneByOrFail({ email: taken });
      expect(owner.name).toBe('First Owner');
      const notice = await t.mail.waitFor({
        to: taken,
        subject: 'Someone tried to register with your address',
      });
      expect(notice.text).toContain('Hello First Owner');
      expect(notice.links).toEqual([
        `${t.config.app.publicUrl}/login`,
        `${t.config.app.publicUrl}/forgot-password`,
        t.config.app.publicUrl,
      ]);
      await t.mail.waitFor({ to: fresh, subject: 'Confirm your email address' });
      // The notice does not sign anyone in or change the account.
      expect((await web().login(taken, 'another good password')).headers.location).toBe('/login');
    });
  });

  it('should keep one account per mailbox however its domain and letters are written, and mail it where its domain points', async () => {
    const local = uniqueEmail('idn').split('@')[0];
    const ascii = `${local}@xn--bcher-kva.example`;
    const unicode = `${local}@bücher.example`;
    const client = web();
    await client.register('Unicode Owner', unicode, PASSWORD, { confirm: false });
    // Stored, and mailed, in the form mail carries: the domain in ASCII (the test server shows
    // the envelope's domain decoded, as a receiving server may).
    const confirmation = await t.mail.waitFor({
      to: unicode,
      subject: 'Confirm your email address',
    });
    expect(confirmation.raw).toMatch(new RegExp(`^To: ${ascii}\\r?$`, 'm'));
    await client.confirmEmail(unicode);
    const owner = await users().findOneByOrFail({ email: ascii });
    expect(owner.emailVerifiedAt).not.toBeNull();

    const spellings = [
      ascii,
      `${local}@bu\u0308cher.example`, // ü typed as u and a combining diaeresis
      `${local.toUpperCase()}@BÜCHER.EXAMPLE`,
      `${local}@ｂüｃｈｅｒ.example`, // full-width letters
    ];
    for (const email of spellings) {
      const res = await web().submit('/register', '/register', {
        name: 'Second Account',
        email,
        password: 'another good password',
        password_confirmation: 'another good password',
      });
      expect([res.status, res.headers.location]).toEqual([303, '/register/check-email']);
    }
    expect(await users().countBy({ name: 'Second Account' })).toBe(0);
    expect(await users().countBy({ email: ascii })).toBe(1);
    const notices = await t.mail.waitForCount(
      { to: unicode, subject: 'Someone tried to register with your address' },
      spellings.length,
    );
    expect(notices).toHaveLength(spellings.length);

    // Each spelling signs in to the one account.
    for (const email of spellings) {
      const res = await web().login(email, PASSWORD);
      expect([email, res.headers.location]).toEqual([email, '/dashboard']);
    }
  });

  describe('sign-in and sign-out', () => {
    it('should send a sign-in or a sign-out from a tab left open to where it leads once another tab did it, and refuse it elsewhere', async () => {
      const email = uniqueEmail('tabs');
      await createUser(t.app, { name: 'Two Tabs', email, password: PASSWORD });
      const first = web();
      const second = first.on(t.server);
      // Both tabs show the sign-in form; the first signs in.
      const stale = await second.csrfFrom('/login?return_to=%2Fteams');
      expect((await first.login(email)).headers.location).toBe('/dashboard');
      // The second's form, its token made before, goes where signing in would have led.
      const signIn = await second.post('/login', stale, {
        email,
        password: 'not even checked',
        return_to: '/teams',
      });
      expect(`${signIn.status} ${signIn.headers.location}`).toBe('303 /teams');
      expect((await second.get('/dashboard')).status).toBe(200);

      // Both show a page with Sign out; the first signs out, then the second.
      const staleSignOut = await second.csrfFrom('/dashboard');
      await first.post('/logout', await first.csrfFrom('/dashboard'));
      const signOut = await second.post('/logout', staleSignOut);
      expect(`${signOut.status} ${signOut.headers.location}`).toBe('303 /login?signed_out=1');

      // A stale token anywhere else is refused as before, signed in or not.
      const other = web();
      const token = await other.csrfFrom('/login');
      await other.login(email);
      const form = await other.post('/teams', token, { name: 'Stale Form' });
      expect(form.status).toBe(403);
      await other.post('/logout', await other.csrfFrom('/dashboard'));
      expect((await other.post('/login', token, { email, password: PASSWORD })).status).toBe(403);
    });

    it('should give the same message for a wrong password and an unknown email', async () => {
      const email = uniqueEmail('login');
      await web().register('Login Tester', email, 'the right password');
      const messages: string[] = [];
      for (const [who, password] of [
        [email, 'the wrong password'],
        [uniqueEmail('nobody'), 'the right password'],
      ]) {
        const client = web();
        const res = await client.login(who, password);
        expect(res.headers.location).toBe('/login');
        const page = await client.get('/login');
        // The message is the password's, which is marked and tied to it; the address is kept.
        messages.push(/<p class="field-error" id="password-error">([^<]+)</.exec(page.text)![1]);
        expect(page.text).toMatch(
          /<input id="password" [^>]*aria-invalid="true" aria-describedby="password-error">/,
        );
        expect(page.text).not.toContain('alert-error');
        expect(page.text).not.toMatch(/id="email"[^>]*aria-invalid/);
        expect(page.text).toContain(`value="${who}"`);
        expect((await client.get('/dashboard')).headers.location).toBe('/login');
      }
      expect(messages[0]).toBe('These credentials do not match our records.');
      expect(messages[1]).toBe(messages[0]);
    });

    it('should answer as for a wrong password when the account is deleted as it signs in', async () => {
      const email = uniqueEmail('going');
      await web().register('Going Away', email, 'the right password');
      // The password is checked; the account is deleted before the session is stored.
      const auth = t.app.get(AuthService);
      const signIn = auth.signIn.bind(auth);
      jest.spyOn(auth, 'signIn').mockImplementationOnce(async (...args) => {
        const user = await signIn(...args);
        await t.dataSource.getRepository(User).delete({ id: user.id });
        return user;
      });
      const client = web();
      try {
        expect((await client.login(email, 'the right password')).headers.location).toBe('/login');
      } finally {
        jest.restoreAllMocks();
      }
      expect(visibleText((await client.get('/login')).text)).toContain(
        'These credentials do not match our records.',
      );
      expect((await client.get('/dashboard')).headers.location).toBe('/login');
    });

    it('should ask for what is missing when the sign-in form is empty', async () => {
      const client = web();
      const res = await client.login('', '');
      expect(res.headers.location).toBe('/login');
      const text = visibleText((await client.get('/login')).text);
      expect(text).toContain('Enter your email.');
      expect(text).toContain('Enter your password.');
      expect(text).not.toContain('These credentials do not match our records.');
    });

    it('should take a visitor back to the page they asked for after signing in', async () => {
      const email = uniqueEmail('return');
      await web().register('Returner', email);
      const client = web();
      const asked = await client.get('/settings/api-tokens?tab=new');
      expect(asked.headers.location).toBe('/login?return_to=%2Fsettings%2Fapi-tokens%3Ftab%3Dnew');
      const loginPage = await client.get(asked.headers.location);
      expect(loginPage.text).toContain(
        '<input type="hidden" name="return_to" value="/settings/api-tokens?tab&#x3D;new">',
      );
      const res = await client.submit(asked.headers.location, '/login', {
        email,
        password: 'correct horse battery',
        return_to: '/settings/api-tokens?tab=new',
      });
      expect(res.headers.location).toBe('/settings/api-tokens?tab=new');

      for (const outside of ['//evil.example/', 'https://evil.example/', '/\\evil.example']) {
        const visitor = web();
        const refused = await visitor.submit('/login', '/login', {
          email,
          password: 'correct horse battery',
          return_to: outside,
        });
        expect(refused.headers.location).toBe('/dashboard');
        const page = await visitor.get(`/login?return_to=${encodeURIComponent(outside)}`);
        expect(page.headers.location).toBe('/dashboard');
      }

      const elsewhere = web();
      await elsewhere.get('/login');
      expect((await elsewhere.login(email)).headers.location).toBe('/dashboard');
    });

    it('should give a new session id at sign-in', async () => {
      const email = uniqueEmail('fixation');
      await web().register('Fixation Tester', email);
      // A visitor's session exists once it has something to keep: here, a refusal's message.
      const client = web();
      const refused = await client.login(email, 'not the password');
      const before = client.sessionCookie(refused);
      const res = await client.login(email);
      expect(res.headers.location).toBe('/dashboard');
      const after = client.sessionCookie(res);
      expect(before).toBeDefined();
      expect(after).toBeDefined();
      expect(after).not.toBe(before);
      const planted = await request(t.server).get('/dashboard').set('Cookie', before!);
      expect(planted.headers.location).toBe('/login?session_ended=1');
    });

    it('should destroy the session at sign-out, so the old cookie is dead', async () => {
      const client = web();
      const registered = await client.register('Sign Out', uniqueEmail('out'));
      const cookie = client.sessionCookie(registered)!;
      expect((await request(t.server).get('/dashboard').set('Cookie', cookie)).status).toBe(200);
      const sessions = t.dataSource.getRepository(Session);
      expect(await sessions.findOneBy({ id: sessionIdOf(cookie) })).not.toBeNull();

      const res = await client.submit('/dashboard', '/logout');
      expect(res.headers.location).toBe('/login?signed_out=1');
      expect(visibleText((await client.get(res.headers.location)).text)).toContain(
        'You signed out. Sign in to Tessera',
      );
      expect(visibleText((await client.get('/login')).text)).not.toContain('You signed out');

      expect(await sessions.findOneBy({ id: sessionIdOf(cookie) })).toBeNull();
      expect(
        (await request(t.server).get('/dashboard').set('Cookie', cookie)).headers.location,
      ).toBe('/login?session_ended=1');
    });

    it('should send a signed-in person away from the sign-in and sign-up pages', async () => {
      const client = web();
      await client.register('Already In', uniqueEmail());
      expect((await client.get('/login')).headers.location).toBe('/dashboard');
      expect((await client.get('/register')).headers.location).toBe('/dashboard');
    });
  });

  describe('cookies and timeouts', () => {
    it('should set HttpOnly, SameSite=Lax session and CSRF cookies, Secure only over HTTPS', async () => {
      const cookiesOf = (res: request.Response) =>
        ([] as string[]).concat(res.headers['set-cookie'] ?? []);
      const page = await request(t.server).get('/login');
      // Viewing the sign-in page stores no session: its form's token is in a cookie alone.
      expect(cookiesOf(page).some((c) => c.startsWith('tessera.sid='))).toBe(false);
      const csrf = cookiesOf(page).find((c) => c.startsWith('tessera.csrf='))!;
      const client = web();
      const email = uniqueEmail('cookies');
      await web().register('Cookie Flags', email);
      const signedIn = await client.login(email);
      const session = cookiesOf(signedIn).find((c) => c.startsWith('tessera.sid='))!;
      for (const cookie of [csrf, session]) {
        expect(cookie).toMatch(/; HttpOnly/);
        expect(cookie).toMatch(/; SameSite=Lax/);
        expect(cookie).not.toMatch(/; Secure/);
      }

      const spoofed = await request(t.server).get('/login').set('X-Forwarded-Proto', 'https');
      expect(String(spoofed.headers['set-cookie'])).not.toMatch(/; Secure/);
    });

    it('should mark the cookie Secure behind a trusted TLS proxy', async () => {
      const proxied = await createTestApp({ TRUST_PROXY: '1' });
      try {
        const res = await request(proxied.server).get('/login').set('X-Forwarded-Proto', 'https');
        expect(String(res.headers['set-cookie'])).toMatch(/; Secure/);
      } finally {
        await proxied.close();
      }
    });

    it("should send the session's cookie again only with a change of the session, its activity noted once a minute included", async () => {
      const sessionCookieOf = (res: request.Response) =>
        ([] as string[])
          .concat(res.headers['set-cookie'] ?? [])
          .find((c) => c.startsWith('tessera.sid='));
      const client = web();
      await client.register('Quiet Cookie', uniqueEmail());
      // The message signing up left, shown (and so taken from the session).
      await client.get('/dashboard');
      // Within the minute of its last activity, a page view changes nothing: no cookie.
      const quiet = await client.get('/dashboard');
      expect(quiet.status).toBe(200);
      expect(sessionCookieOf(quiet)).toBeUndefined();
      // A minute later the view notes the activity: the session, and its cookie, are extended.
      clock.advance(2 * MINUTE_MS);
      const noted = await client.get('/dashboard');
      expect(noted.status).toBe(200);
      expect(sessionCookieOf(noted)).toMatch(/; Expires=/);
    });

    it.each([
      ['read the session only', true],
      ['took a message from the session', false],
    ])(
      "should keep a sign-in when a page of the visitor's session that %s answers after it",
      async (_, shownBefore) => {
        const visitor = web();
        const email = uniqueEmail('racing');
        await createUser(t.app, { name: 'Racing Visitor', email, password: PASSWORD });
        // A visitor's session: the message that a reset link was sent, shown now or by the
        // page below, which is that link's.
        await visitor.submit('/forgot-password', '/forgot-password', { email });
        const [mail] = await t.mail.waitForCount({ to: email }, 1);
        const link = TestSmtpServer.linkPath(mail, '/reset-password/');
        if (shownBefore) await visitor.get('/login');
        // That page, held after it read the session, while the visitor signs in.
        const { reached, release } = pauseNextCall(t.app.get(PasswordResetService), 'assertUsable');
        const page = visitor.get(link).then((res) => res);
        try {
          await Promise.race([reached, page]);
          expect((await visitor.login(email)).headers.location).toBe('/dashboard');
          release();
          expect((await page).status).toBe(200);
        } finally {
          release();
          await page;
          jest.restoreAllMocks();
        }
        // Its answer, the older session's, did not put that session's cookie back.
        expect((await visitor.get('/dashboard')).status).toBe(200);
      },
    );

    it("should keep a visitor's session for its 15 minutes from its last change, its row as its cookie, however many pages it views", async () => {
      const visitor = web();
      const refused = await visitor.login(uniqueEmail('nobody'), 'a guess');
      const sid = sessionIdOf(visitor.sessionCookie(refused)!);
      const sessions = t.dataSource.getRepository(Session);
      const { expiresAt } = await sessions.findOneByOrFail({ id: sid });
      // The message shown, then pages viewed minutes later: neither row nor cookie moves.
      await visitor.get('/login');
      const { expiresAt: shown } = await sessions.findOneByOrFail({ id: sid });
      for (let i = 0; i < 3; i++) {
        clock.advance(2 * MINUTE_MS);
        const page = await visitor.get('/forgot-password');
        expect(page.status).toBe(200);
        expect(visitor.sessionCookie(page)).toBeUndefined();
      }
      expect((await sessions.findOneByOrFail({ id: sid })).expiresAt).toEqual(shown);
      expect(shown.getTime() - expiresAt.getTime()).toBeLessThan(MINUTE_MS);
    });

    it('should answer 503 when the session a refused form leaves its message in cannot be stored', async () => {
      const person = await signedInPerson(t);
      const csrf = await person.client.csrfFrom('/teams');
      jest
        .spyOn(t.app.get(SessionsRepository), 'update')
        .mockRejectedValueOnce(
          Object.assign(new Error('Lock wait timeout exceeded'), { code: 'ER_LOCK_WAIT_TIMEOUT' }),
        );
      try {
        const res = await person.client.post('/teams', csrf, { name: '' });
        expect(res.status).toBe(503);
        expect(res.headers['retry-after']).toBeDefined();
        expect(visibleText(res.text)).toContain('Tessera is not available right now');
      } finally {
        jest.restoreAllMocks();
      }
    });

    it('should end a session when it has been idle past its expiry', async () => {
      const client = web();
      await client.register('Idle', uniqueEmail());
      // Each page extends it by the idle timeout from the time it is seen.
      clock.advance(20 * MINUTE_MS);
      expect((await client.get('/dashboard')).status).toBe(200);
      clock.advance(30 * MINUTE_MS + 1_000);
      // The browser still names the session: on the way to sign in, it is told the session ended.
      expect((await client.get('/dashboard')).headers.location).toBe('/login?session_ended=1');
      expect((await client.get('/settings/api-tokens')).headers.location).toBe(
        '/login?return_to=%2Fsettings%2Fapi-tokens&session_ended=1',
      );
      const signIn = await client.get('/login?return_to=%2Fsettings%2Fapi-tokens&session_ended=1');
      expect(visibleText(signIn.text)).toContain('Your session has ended. Sign in again to go on.');
      expect(signIn.text).toContain('name="return_to" value="/settings/api-tokens"');
      // Signed out on purpose, the browser names no session: no word of one ending.
      const other = web();
      await other.register('Signed Out', uniqueEmail());
      await other.submit('/dashboard', '/logout');
      expect((await other.get('/dashboard')).headers.location).toBe('/login');
      expect((await request(t.server).get('/dashboard')).headers.location).toBe('/login');
      expect(visibleText((await other.get('/login')).text)).not.toContain('Your session has ended');
    });

    it('should keep a session signed in for 30 days when asked, however idle, and say so on Sessions', async () => {
      const email = uniqueEmail('kept');
      await createUser(t.app, { name: 'Kept Signed In', email, password: PASSWORD });
      const kept = web();
      const res = await kept.submit('/login', '/login', {
        email,
        password: PASSWORD,
        remember: 'on',
      });
      expect(res.headers.location).toBe('/dashboard');
      const cookie = ([] as string[])
        .concat(res.headers['set-cookie'] ?? [])
        .find((c) => c.startsWith('tessera.sid='))!;
      // The cookie lives 30 days (from the machine's time, which the browser keeps).
      const lifetime = Date.parse(/Expires=([^;]+)/.exec(cookie)![1]) - Date.now();
      expect(Math.round(lifetime / (24 * 60 * MINUTE_MS))).toBe(30);
      const usual = web();
      await usual.login(email, PASSWORD);
      const sessions = await kept.get('/settings/sessions');
      expect(sessions.text.match(/Kept signed in/g)).toHaveLength(1);
      expect(visibleText(sessions.text)).toMatch(/This device Kept signed in/);

      // Past the idle timeout and the absolute one, the usual session is over; the kept one is not.
      clock.advance(2 * 60 * MINUTE_MS);
      expect((await usual.get('/dashboard')).headers.location).toBe('/login?session_ended=1');
      expect((await kept.get('/dashboard')).status).toBe(200);
      clock.advance(29 * 24 * 60 * MINUTE_MS);
      expect((await kept.get('/dashboard')).status).toBe(200);
      // Thirty days after signing in, it ends too.
      clock.advance(24 * 60 * MINUTE_MS);
      expect((await kept.get('/dashboard')).headers.location).toBe('/login?session_ended=1');
    });

    it('should end a session older than the absolute timeout however active it is', async () => {
      const client = web();
      const res = await client.register('Absolute', uniqueEmail());
      const sid = sessionIdOf(client.sessionCookie(res)!);
      const csrf = await client.csrfFrom('/teams');
      // Used every 20 minutes, so never idle for long: the hour since signing in ends it.
      for (let i = 0; i < 3; i++) {
        clock.advance(20 * MINUTE_MS);
        expect((await client.get('/dashboard')).status).toBe(200);
      }
      clock.advance(MINUTE_MS);

      // A form sent now ends the session on arrival: nothing is done, and signing in again
      // leads back to the form's page.
      const late = await client.post('/teams', csrf, { name: 'Too Late' });
      expect(late.headers.location).toBe('/login?return_to=%2Fteams&session_ended=1');
      expect(await t.dataSource.getRepository(Team).countBy({ name: 'Too Late' })).toBe(0);
      // Told once: the browser holds a visitor's session now, which has not ended.
      expect((await client.get('/dashboard')).headers.location).toBe('/login');
      expect(await t.dataSource.getRepository(Session).findOneBy({ id: sid })).toBeNull();
    });
  });

  describe('CSRF', () => {
    it('should refuse a form without its CSRF token with a 403 page and change nothing', async () => {
      const client = web();
      await client.get('/register');
      const email = uniqueEmail('csrf');
      const fields = {
        name: 'Mallory',
        email,
        password: 'password123',
        password_confirmation: 'password123',
      };

      const missing = await client.agent.post('/register').type('form').send(fields);
      expect(missing.status).toBe(403);
      expect(missing.headers['content-type']).toMatch(/^text\/html/);
      expect(missing.text).toContain('This form has expired or did not come from this site.');

      const wrong = await client.agent
        .post('/register')
        .type('form')
        .send({ ...fields, _csrf: 'f'.repeat(64) });
      expect(wrong.status).toBe(403);
      expect(await users().countBy({ email })).toBe(0);
    });

    it('should tell someone whose session ended while a form was open to sign in again, and do nothing', async () => {
      const person = web();
      const email = uniqueEmail('left-open');
      await person.register('Left Open', email);
      const csrf = await person.csrfFrom('/teams');
      // Signed out in another tab of the same browser: the form's page is still open here.
      await person.submit('/dashboard', '/logout');
      const stale = await person.post('/teams', csrf, { name: 'Never Made' });
      expect(stale.status).toBe(403);
      const text = visibleText(stale.text);
      expect(text).toContain('If you were signed in, your session has ended meanwhile');
      // Signing in again leads back to the form's page.
      // (Handlebars writes `=` in an attribute as `&#x3D;`, which the browser reads as `=`.)
      expect(stale.text).toContain(
        '<a class="button" href="/login?return_to&#x3D;%2Fteams">Sign in</a>',
      );
      expect(await t.dataSource.getRepository(Team).countBy({ name: 'Never Made' })).toBe(0);
      // A form of a page with an address of its own (a team's rename) leads back to that page.
      const { currentTeamId } = await users().findOneByOrFail({ email });
      const team = await t.dataSource.getRepository(Team).findOneByOrFail({ id: currentTeamId! });
      const rename = await person.post(`/teams/${team.id}`, csrf, { name: 'Renamed' });
      expect(rename.status).toBe(403);
      expect(rename.text).toContain(`href="/login?return_to&#x3D;%2Fteams%2F${team.id}"`);
      expect((await t.dataSource.getRepository(Team).findOneByOrFail({ id: team.id })).name).toBe(
        "Left's Team",
      );
      // Signed in, a bad token is refused as it always was: no word of a session ending.
      const other = web();
      await other.register('Still Here', uniqueEmail('still-here'));
      const forged = await other.post('/teams', 'f'.repeat(64), { name: 'Never Made' });
      expect(forged.status).toBe(403);
      expect(visibleText(forged.text)).not.toContain('your session has ended');
    });

    it("should refuse another session's CSRF token", async () => {
      const victim = web();
      await victim.register('Victim', uniqueEmail());
      const attacker = web();
      const attackerToken = await attacker.csrfFrom('/login');
      const res = await victim.agent.post('/logout').type('form').send({ _csrf: attackerToken });
      expect(res.status).toBe(403);
      expect((await victim.get('/dashboard')).status).toBe(200);
    });
  });

  describe('forged sign-in forms', () => {
    const cookiesOf = (res: request.Response) =>
      ([] as string[]).concat(res.headers['set-cookie'] ?? []);
    /** The cookie named `name` that `res` sets, as a request sends it back (name=value). */
    const cookieOf = (res: request.Response, name: string) =>
      cookiesOf(res)
        .find((c) => c.startsWith(`${name}=`))
        ?.split(';')[0];
    /** What a browser that opened the sign-in page holds: its cookies and the form's token. */
    async function signInPage() {
      const page = await request(t.server).get('/login');
      return {
        csrf: cookieOf(page, 'tessera.csrf'),
        visitor: cookieOf(page, 'tessera.visitor'),
        token: csrfTokenIn(page.text),
      };
    }
    const postLogin = (cookies: (string | undefined)[], fields: Record<string, string>) =>
      request(t.server)
        .post('/login')
        .set('Cookie', cookies.filter((c) => c !== undefined).join('; '))
        .type('form')
        .send(fields);

    it("should refuse a visitor's CSRF pair in any browser but the one it was made in", async () => {
      // The attacker opens the sign-in page in their own browser, for their own account.
      const email = uniqueEmail('tosser');
      await createUser(t.app, { name: 'Tosser', email, password: PASSWORD });
      const attacker = await signInPage();
      const fields = { email, password: PASSWORD, _csrf: attacker.token };

      // Their pair, tossed into the victim's browser (which has a visitor id of its own, or none
      // yet) and posted from there, signs nobody in.
      const victim = await signInPage();
      for (const cookies of [[victim.visitor, attacker.csrf], [attacker.csrf]]) {
        const forged = await postLogin(cookies, fields);
        expect(forged.status).toBe(403);
        expect(visibleText(forged.text)).toContain(
          'This form has expired or did not come from this site.',
        );
        expect(cookieOf(forged, 'tessera.sid')).toBeUndefined();
      }
      // In the browser it was made in, it serves.
      const own = await postLogin([attacker.visitor, attacker.csrf], fields);
      expect(own.headers.location).toBe('/dashboard');

      // A random id, HttpOnly and SameSite=Lax, as the other cookies.
      expect(attacker.visitor).toMatch(/^tessera\.visitor=[\w-]{32}$/);
      const page = await request(t.server).get('/login');
      const visitorCookie = cookiesOf(page).find((c) => c.startsWith('tessera.visitor='))!;
      expect(visitorCookie).toMatch(/; HttpOnly/);
      expect(visitorCookie).toMatch(/; SameSite=Lax/);
      expect(visitorCookie).toMatch(/; Path=\//);
    });

    it("should refuse a visitor's form that the browser says comes from another site, with a page that says so", async () => {
      const email = uniqueEmail('elsewhere');
      await createUser(t.app, { name: 'Elsewhere', email, password: PASSWORD });
      const send = async (headers: Record<string, string>) => {
        const browser = await signInPage();
        let req = postLogin([browser.visitor, browser.csrf], {
          email,
          password: PASSWORD,
          _csrf: browser.token,
        });
        for (const [name, value] of Object.entries(headers)) req = req.set(name, value);
        return req;
      };
      for (const headers of <Record<string, string>[]>[
        { 'Sec-Fetch-Site': 'cross-site' },
        { 'Sec-Fetch-Site': 'same-site', Origin: 'https://other.example.com' },
        { Origin: 'https://evil.example' },
      ]) {
        const refused = await send(headers);
        expect(refused.status).toBe(403);
        expect(visibleText(refused.text)).toContain(
          'This form was sent from another site, so Tessera did not act on it.',
        );
        expect(cookieOf(refused, 'tessera.sid')).toBeUndefined();
      }
      // This site's own pages; Origin: null (what no-referrer makes of this site's own forms); a
      // client that is not a browser and says neither: the token decides, and it is good.
      const own = `http://127.0.0.1:${(t.server.address() as AddressInfo).port}`;
      for (const headers of <Record<string, string>[]>[
        { 'Sec-Fetch-Site': 'same-origin', Origin: own },
        { 'Sec-Fetch-Site': 'none' },
        { Origin: own },
        { Origin: new URL(t.config.app.publicUrl).origin },
        { Origin: 'null' },
        {},
      ]) {
        expect((await send(headers)).headers.location).toBe('/dashboard');
      }
    });

    it('should name its cookies __Host- and always mark them Secure when APP_URL is https', async () => {
      const https = await createTestApp({
        APP_URL: 'https://tessera.example.com',
        TRUST_PROXY: '1',
      });
      try {
        const email = uniqueEmail('host-prefix');
        await createUser(https.app, { name: 'Host Prefix', email, password: PASSWORD });
        const viaTls = (req: request.Test) => req.set('X-Forwarded-Proto', 'https');
        const page = await viaTls(request(https.server).get('/login'));
        const csrf = cookieOf(page, '__Host-tessera.csrf');
        const visitor = cookieOf(page, '__Host-tessera.visitor');
        expect(csrf).toBeDefined();
        expect(visitor).toBeDefined();
        const signedIn = await viaTls(
          request(https.server)
            .post('/login')
            .set('Cookie', `${csrf}; ${visitor}`)
            .type('form')
            .send({ email, password: PASSWORD, _csrf: csrfTokenIn(page.text) }),
        );
        expect(signedIn.headers.location).toBe('/dashboard');
        const session = cookieOf(signedIn, '__Host-tessera.sid')!;
        const set = [...cookiesOf(page), ...cookiesOf(signedIn)];
        expect(set.length).toBeGreaterThanOrEqual(3);
        for (const cookie of set) {
          expect(cookie).toMatch(/^__Host-tessera\./);
          expect(cookie).toMatch(/; Secure/);
          expect(cookie).toMatch(/; Path=\/(;|$)/);
          expect(cookie).not.toMatch(/; Domain=/i);
        }
        const dashboard = await viaTls(
          request(https.server).get('/dashboard').set('Cookie', session),
        );
        expect(dashboard.status).toBe(200);
        // Signing out clears it with the same attributes, as a __Host- cookie must be.
        const logout = await viaTls(
          request(https.server)
            .post('/logout')
            .set('Cookie', `${session}; ${cookieOf(dashboard, '__Host-tessera.csrf')}`)
            .type('form')
            .send({ _csrf: csrfTokenIn(dashboard.text) }),
        );
        expect(logout.headers.location).toBe('/login?signed_out=1');
        const cleared = cookiesOf(logout).find((c) => c.startsWith('__Host-tessera.sid='));
        expect(cleared).toMatch(/; Secure/);
        expect(cleared).toMatch(/; Path=\//);
      } finally {
        await https.close();
      }
    });
  });

  describe('error pages', () => {
    it('should answer unknown pages with a 404 page for visitors and signed-in people', async () => {
      const client = web();
      expect((await client.get('/nowhere')).status).toBe(404);
      await client.register('Lost', uniqueEmail());
      const res = await client.get('/nowhere');
      expect(res.status).toBe(404);
      // Who is signed in, in the header, and what went wrong in words.
      const text = visibleText(res.text);
      expect(text).toContain('Lost Sign out');
      expect(text).toContain('We could not find that page There is nothing at this address');
      expect(text).toContain('Back to your dashboard');
      expect(text).toContain('Error 404 (Not Found)');
    });
  });
});

describe('sign-in while passwords are being hashed', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_ENABLED: 'false' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('should sign a person in when 40 registrations wait for their hashes or are turned away', async () => {
    const email = uniqueEmail('busy');
    await createUser(t.app, { email, password: PASSWORD });
    const forms = await Promise.all(
      Array.from({ length: 40 }, async () => {
        const client = new WebClient(t.server, t.mail);
        return { client, _csrf: await client.csrfFrom('/register') };
      }),
    );
    const signInClient = new WebClient(t.server, t.mail);
    const signInCsrf = await signInClient.csrfFrom('/login');

    const finished: string[] = [];
    const registrations = forms.map(({ client, _csrf }, i) =>
      client.agent
        .post('/register')
        .type('form')
        .send({
          _csrf,
          name: `Busy ${i}`,
          email: uniqueEmail('busy-reg'),
          password: PASSWORD,
          password_confirmation: PASSWORD,
        })
        .then((res) => {
          finished.push('registration');
          return res;
        }),
    );
    const signIn = signInClient.agent
      .post('/login')
      .type('form')
      .send({ _csrf: signInCsrf, email, password: PASSWORD })
      .then((res) => {
        finished.push('sign-in');
        return res;
      });
    const [signedIn, ...registered] = await Promise.all([signIn, ...registrations]);

    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.location).toBe('/dashboard');
    // Sign-in did not wait behind the registrations' hashes.
    expect(finished.indexOf('sign-in')).toBeLessThan(finished.length - 1);
    const statuses = registered.map((r) => r.status);
    expect(statuses.every((s) => s === 303 || s === 503)).toBe(true);
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThan(0);
    const busy = registered.find((r) => r.status === 503)!;
    expect(busy.headers['retry-after']).toBe('1');
    expect(visibleText(busy.text)).toContain('The server is busy. Try again in a moment.');
    const created = await t.dataSource.getRepository(User).countBy({ name: Not(IsNull()) });
    expect(created).toBe(1 + statuses.filter((s) => s === 303).length);
  });
});

/** A visitor's pages cost no stored session; the session of a message to show ends soon. */
describe('sessions for visitors', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_ENABLED: 'false' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('should store no session when visitors open pages and forms, and end a message’s session within minutes', async () => {
    const sessions = t.dataSource.getRepository(Session);
    const anonymous = () => sessions.countBy({ userId: IsNull() });
    const before = await anonymous();
    for (let i = 0; i < 100; i++) {
      for (const path of ['/dashboard', '/teams', '/settings/api-tokens', '/', '/nowhere']) {
        expect((await request(t.server).get(path)).status).toBeLessThan(500);
      }
    }
    expect(await anonymous()).toBe(before);
    // Nor for the forms: their CSRF token lives in a cookie, signed, not in a session.
    for (let i = 0; i < 100; i++) {
      for (const path of ['/login', '/register', '/forgot-password']) {
        const page = await request(t.server).get(path);
        expect(page.text).toContain('name="_csrf"');
        expect(String(page.headers['set-cookie'])).not.toContain('tessera.sid=');
      }
    }
    expect(await anonymous()).toBe(before);

    // A message to show (a refused sign-in) is kept, in a session that ends within minutes.
    const visitor = new WebClient(t.server, t.mail);
    const refused = await visitor.login(uniqueEmail('nobody'), 'a guess');
    const cookie = visitor.sessionCookie(refused)!;
    const row = await sessions.findOneByOrFail({ id: sessionIdOf(cookie) });
    expect(row.expiresAt.getTime()).toBeLessThanOrEqual(Date.now() + GUEST_SESSION_MS + 1000);

    const email = uniqueEmail('full');
    await createUser(t.app, { email, password: PASSWORD });
    const signedIn = await visitor.login(email, PASSWORD);
    const member = await sessions.findOneByOrFail({
      id: sessionIdOf(visitor.sessionCookie(signedIn)!),
    });
    expect(member.expiresAt.getTime()).toBeGreaterThan(Date.now() + 60 * 60_000);
  });

  it('should store no session when the sign-in page is viewed a thousand times, and still refuse a forged form', async () => {
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
});

/** What a person sees when something fails that is nobody's input: here, a table gone missing. */
describe('sign-up when the database fails', () => {
  let t: TestApp;

  afterEach(async () => {
    await t.close();
  });

  it('should create an account all or nothing, no user without its personal team, when a write fails', async () => {
    t = await createTestApp();
    const client = new WebClient(t.server, t.mail);
    await client.get('/register');
    await t.dataSource.query('DROP TABLE team_members');
    const email = uniqueEmail('atomic');

    const res = await client.submit('/register', '/register', {
      name: 'Half Written',
      email,
      password: 'a good password',
      password_confirmation: 'a good password',
    });

    expect(res.status).toBe(500);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.text).toContain('Something went wrong on our side.');
    expect(res.text).toContain(`mention request <code>${res.headers['x-request-id']}</code>`);
    expect(res.text).not.toMatch(/team_members|SQLITE|ER_/);
    expect(await t.dataSource.getRepository(User).countBy({ email })).toBe(0);
  });
});
