import { afterAll, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { LessThan, MoreThan } from 'typeorm';
import { ManualClock } from '../src/clock/clock.js';
import { AuditEvent } from '../src/audit/audit-event.entity.js';
import { Passkey } from '../src/passkeys/passkey.entity.js';
import { PasskeyChallenge } from '../src/passkeys/passkey-challenge.entity.js';
import { PasskeyChallenges } from '../src/passkeys/passkey-challenges.js';
import { Scheduler } from '../src/scheduler/scheduler.js';
import { TwoFactorCredential } from '../src/two-factor/two-factor-credential.entity.js';
import { burst, tally } from './support/burst.js';
import { visibleText } from './support/html.js';
import { signedInPerson, type SignedInPerson } from './support/people.js';
import { TestSmtpServer } from './support/smtp-server.js';
import { forgetPasswordConfirmation } from './support/sessions.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { turnOnTwoFactor, turnOnTwoFactorOnPages, atTheChallenge } from './support/two-factor.js';
import { SoftAuthenticator, type WebAuthnOverrides } from './support/webauthn.js';
import { WebClient } from './support/web-client.js';
import { addPasskeyFrom, registeredByAnother, resetLinkFor } from './support/held-accounts.js';

const REFUSED = 'That passkey could not be verified.';

/** A visitor's try at signing in with the passkey from the sign-in page. */
async function passkeySignIn(
  t: TestApp,
  authenticator: SoftAuthenticator,
  overrides: WebAuthnOverrides = {},
  visitor = new WebClient(t.server, t.mail),
) {
  const csrf = await visitor.csrfFrom('/login');
  const options = await visitor.post('/login/passkey/options', csrf);
  expect(options.status).toBe(200);
  const credential = JSON.stringify(
    authenticator.authenticate(options.body, originOf(t), overrides),
  );
  const res = await visitor.post('/login/passkey', csrf, { credential });
  return { res, visitor, credential, csrf };
}

const originOf = (t: TestApp) => new URL(t.config.app.publicUrl).origin;

/** A passkey made for a challenge the server never handed out. */
const madeUpRegistration = (authenticator: SoftAuthenticator, origin: string) =>
  authenticator.register(
    {
      challenge: 'bWFkZS11cC1jaGFsbGVuZ2U',
      rp: { id: new URL(origin).hostname, name: 'Tessera' },
      user: { id: 'bWFsbG9yeQ', name: 'mallory', displayName: 'Mallory' },
      pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
    },
    origin,
  );

describe('passkeys', () => {
  let t: TestApp;
  let origin: string;
  const clock = new ManualClock();

  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_ENABLED: 'false' }, { clock });
    origin = new URL(t.config.app.publicUrl).origin;
  });
  afterAll(async () => {
    await t.close();
  });

  const addPasskey = (person: SignedInPerson, authenticator: SoftAuthenticator, name?: string) =>
    addPasskeyFrom(t, person.client, authenticator, name);
  const signInWith = (
    authenticator: SoftAuthenticator,
    overrides?: WebAuthnOverrides,
    visitor?: WebClient,
  ) => passkeySignIn(t, authenticator, overrides, visitor);

  const signedIn = async (client: WebClient) => (await client.get('/dashboard')).status === 200;
  const passkeysOf = (userId: number) => t.dataSource.getRepository(Passkey).findBy({ userId });

  it('should add a passkey, sign in with it (no password, no code), and refuse it once removed', async () => {
    const person = await signedInPerson(t, { name: 'Pia Passkey' });
    await turnOnTwoFactor(t, person);
    const authenticator = SoftAuthenticator.create({
      aaguid: 'ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4',
    });

    const added = await addPasskey(person, authenticator, 'Work laptop');
    expect(added.status).toBe(303);
    expect(added.headers.location).toBe('/settings/security');
    const security = await person.client.textOf('/settings/security');
    expect(security).toContain('Passkey "Work laptop" added');
    expect(security).toContain('Work laptop Google Password Manager');
    const [stored] = await passkeysOf(person.user.id);
    expect(stored).toMatchObject({ credentialId: authenticator.credentialId, name: 'Work laptop' });
    // The user handle is random, not the user id.
    expect(authenticator.userHandle).not.toBe(
      Buffer.from(String(person.user.id)).toString('base64url'),
    );
    expect(Buffer.from(authenticator.userHandle!, 'base64url')).toHaveLength(32);
    await t.app.get(Scheduler).drain();
    await t.mail.waitFor({
      to: person.email,
      subject: 'A passkey was added to your Tessera account',
    });

    // Signing in: no address typed, no password, and no code although two-factor is on.
    const { res, visitor, credential, csrf } = await signInWith(authenticator);
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/dashboard');
    expect(await signedIn(visitor)).toBe(true);
    const events = await t.dataSource
      .getRepository(AuditEvent)
      .findBy({ userId: person.user.id, event: 'sign-in.succeeded' });
    expect(events.map((e) => JSON.parse(e.detail ?? '{}').method)).toContain('passkey');

    // The same answer again (a replay): its challenge is used.
    const replayer = new WebClient(t.server, t.mail);
    const replayed = await replayer.post('/login/passkey', await replayer.csrfFrom('/login'), {
      credential,
    });
    expect(replayed.headers.location).toBe('/login');
    expect(await signedIn(replayer)).toBe(false);
    expect(csrf).toBeDefined();

    // Removed (sudo mode: signing in just now counts): refused from then on.
    const removed = await person.client.submit(
      '/settings/security',
      `/settings/passkeys/${stored.id}/delete`,
    );
    expect(removed.status).toBe(303);
    expect(await passkeysOf(person.user.id)).toHaveLength(0);
    await t.app.get(Scheduler).drain();
    await t.mail.waitFor({
      to: person.email,
      subject: 'A passkey was removed from your Tessera account',
    });
    const after = await signInWith(authenticator);
    expect(after.res.headers.location).toBe('/login');
    expect(await after.visitor.textOf('/login')).toContain(REFUSED);
    expect(await signedIn(after.visitor)).toBe(false);
  });

  it('should refuse a wrong origin, a wrong RP id, another session’s challenge and malformed answers, changing nothing', async () => {
    const person = await signedInPerson(t, { name: 'Rafa Refused' });
    const authenticator = SoftAuthenticator.create({ counter: 5 });
    expect((await addPasskey(person, authenticator)).status).toBe(303);
    const [before] = await passkeysOf(person.user.id);

    const tries: [string, WebAuthnOverrides][] = [
      ['a wrong origin', { origin: 'https://tessera.example.evil' }],
      ['a wrong RP id', { rpId: 'evil.example' }],
      ['another challenge', { challenge: 'bm90LXRoZS1jaGFsbGVuZ2U' }],
      ['no user verification', { userVerified: false }],
    ];
    for (const [, overrides] of tries) {
      const { res, visitor } = await signInWith(authenticator, overrides);
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe('/login');
      expect(await visitor.textOf('/login')).toContain(REFUSED);
      expect(await signedIn(visitor)).toBe(false);
    }

    // A challenge handed to one session, answered in another.
    const asker = new WebClient(t.server, t.mail);
    const options = await asker.post('/login/passkey/options', await asker.csrfFrom('/login'));
    const thief = new WebClient(t.server, t.mail);
    const stolen = await thief.post('/login/passkey', await thief.csrfFrom('/login'), {
      credential: JSON.stringify(authenticator.authenticate(options.body, origin)),
    });
    expect(stolen.headers.location).toBe('/login');
    expect(await signedIn(thief)).toBe(false);

    // Malformed and oversized answers: refused on the form, never a 500.
    for (const credential of [
      'not json',
      '{}',
      '[]',
      'null',
      JSON.stringify({ id: 1 }),
      'x'.repeat(16_001),
    ]) {
      const visitor = new WebClient(t.server, t.mail);
      const res = await visitor.post('/login/passkey', await visitor.csrfFrom('/login'), {
        credential,
      });
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe('/login');
      expect(await signedIn(visitor)).toBe(false);
    }
    const [after] = await passkeysOf(person.user.id);
    expect(after).toMatchObject({ counter: before.counter, lastUsedAt: null });
  });

  it('should refuse a counter that goes backwards, and log it', async () => {
    const person = await signedInPerson(t, { name: 'Cleo Clone' });
    const authenticator = SoftAuthenticator.create({ counter: 10 });
    expect((await addPasskey(person, authenticator)).status).toBe(303);
    expect((await signInWith(authenticator)).res.headers.location).toBe('/dashboard');
    const counter = (await passkeysOf(person.user.id))[0].counter;
    expect(counter).toBe(authenticator.counter);

    const cloned = await signInWith(authenticator, { counter: counter - 1 });
    expect(cloned.res.headers.location).toBe('/login');
    expect(await signedIn(cloned.visitor)).toBe(false);
    expect((await passkeysOf(person.user.id))[0].counter).toBe(counter);
    await t.app.get(Scheduler).drain();
    const failures = await t.dataSource
      .getRepository(AuditEvent)
      .findBy({ userId: person.user.id, event: 'sign-in.failed' });
    expect(failures.map((e) => JSON.parse(e.detail ?? '{}').reason)).toContain(
      'passkey signature counter went backwards',
    );
  });

  it('should let one of a burst of identical answers in, and only one', async () => {
    const person = await signedInPerson(t, { name: 'Bea Burst' });
    const authenticator = SoftAuthenticator.create();
    expect((await addPasskey(person, authenticator)).status).toBe(303);
    const visitor = new WebClient(t.server, t.mail);
    const csrf = await visitor.csrfFrom('/login');
    const options = await visitor.post('/login/passkey/options', csrf);
    const credential = JSON.stringify(authenticator.authenticate(options.body, origin));
    const answers = await burst(10, t.server, () =>
      visitor.post('/login/passkey', csrf, { credential }),
    );
    expect(tally(answers, (r) => String(r.headers.location))).toEqual({
      '/dashboard': 1,
      '/login': 9,
    });
  });

  it('should take a passkey as the second factor, and only the person’s own', async () => {
    const person = await signedInPerson(t, { name: 'Sam Second' });
    await turnOnTwoFactor(t, person);
    const own = SoftAuthenticator.create();
    expect((await addPasskey(person, own)).status).toBe(303);
    const other = await signedInPerson(t, { name: 'Oli Other' });
    const others = SoftAuthenticator.create();
    expect((await addPasskey(other, others)).status).toBe(303);

    await atTheChallenge(person);
    const page = await person.client.textOf('/two-factor-challenge');
    expect(page).toContain('Use a passkey instead');
    const csrf = await person.client.csrfFrom('/two-factor-challenge');
    const options = await person.client.post('/two-factor-challenge/passkey/options', csrf);
    expect(options.body.allowCredentials.map((c: { id: string }) => c.id)).toEqual([
      own.credentialId,
    ]);
    // Another person's passkey, made to answer this challenge: refused.
    const wrong = await person.client.post('/two-factor-challenge/passkey', csrf, {
      credential: JSON.stringify(
        others.authenticate(options.body, origin, { credentialId: others.credentialId }),
      ),
    });
    expect(wrong.headers.location).toBe('/two-factor-challenge');
    const again = await person.client.post('/two-factor-challenge/passkey/options', csrf);
    const right = await person.client.post('/two-factor-challenge/passkey', csrf, {
      credential: JSON.stringify(own.authenticate(again.body, origin)),
    });
    expect(right.headers.location).toBe('/dashboard');
    expect(await signedIn(person.client)).toBe(true);
  });

  it('should confirm a sensitive action with a passkey instead of the password', async () => {
    const person = await signedInPerson(t, { name: 'Sudo Sue' });
    const authenticator = SoftAuthenticator.create();
    expect((await addPasskey(person, authenticator)).status).toBe(303);
    const [passkey] = await passkeysOf(person.user.id);
    forgetPasswordConfirmation(clock);

    // Removing the passkey waits for a confirmation.
    const waiting = await person.client.submit(
      '/settings/security',
      `/settings/passkeys/${passkey.id}/delete`,
    );
    expect(waiting.headers.location).toMatch(/^\/confirm-password\?return_to=/);
    const page = await person.client.get(waiting.headers.location);
    expect(visibleText(page.text)).toContain('Confirm with a passkey');
    const csrf = await person.client.csrfFrom(waiting.headers.location);
    const options = await person.client.post('/confirm-password/passkey/options', csrf);
    const confirmed = await person.client.post('/confirm-password/passkey', csrf, {
      credential: JSON.stringify(authenticator.authenticate(options.body, origin)),
      return_to: '/settings/security',
    });
    expect(confirmed.headers.location).toBe('/confirm-password/continue');
    const resumed = await person.client.resume();
    expect(resumed.headers.location).toBe('/settings/security');
    expect(await passkeysOf(person.user.id)).toHaveLength(0);
  });

  it('should refuse a passkey to an address not confirmed yet, so none outlasts its owner taking the account back', async () => {
    // Someone signs up with another person's address and signs in, unconfirmed (allowed).
    const { email, userId, intruder } = await registeredByAnother(t, 'hijacked');
    expect(await intruder.textOf('/settings/security')).toContain(
      'Passkeys wait for your confirmed address. A passkey can be added once Tessera knows that',
    );

    // Adding a passkey is refused: no challenge, and an answer to a made-up one is not read.
    const authenticator = SoftAuthenticator.create();
    const csrf = await intruder.csrfFrom('/settings/security');
    const options = await intruder.post('/settings/passkeys/options', csrf);
    expect(options.status).toBe(403);
    expect(visibleText(options.text)).toContain(
      'Confirm your email address before adding a passkey',
    );
    const madeUp = madeUpRegistration(authenticator, origin);
    const planted = await intruder.post('/settings/passkeys', csrf, {
      name: 'Planted',
      credential: JSON.stringify(madeUp),
    });
    expect(planted.status).toBe(403);
    expect(await passkeysOf(userId)).toEqual([]);

    // The owner takes the account back with "Forgot your password?" and turns on two-factor.
    const owner = new WebClient(t.server, t.mail);
    await owner.submit('/forgot-password', '/forgot-password', { email });
    const reset = await t.mail.waitFor({ to: email, subject: 'Reset your Tessera password' });
    const link = TestSmtpServer.linkPath(reset, '/reset-password/');
    const fresh = 'the owner took it back';
    await owner.submit(link, link, { password: fresh, password_confirmation: fresh });
    expect((await owner.login(email, fresh)).headers.location).toBe('/dashboard');
    const { done } = await turnOnTwoFactorOnPages(t, { client: owner });
    expect(done.status).toBe(200);

    // Nothing of the intruder's signs in: their session ended, and no passkey was ever added.
    expect(await signedIn(intruder)).toBe(false);
    expect(await passkeysOf(userId)).toEqual([]);
    // The owner, whose address the reset confirmed, may add one.
    expect(
      (await addPasskeyFrom(t, owner, SoftAuthenticator.create(), 'Mine')).headers.location,
    ).toBe('/settings/security');
  });

  it('should ask for the password itself, not a passkey, to add a passkey or change two-factor sign-in after signing in with one', async () => {
    const person = await signedInPerson(t, { name: 'Uma Verified' });
    await turnOnTwoFactor(t, person);
    const authenticator = SoftAuthenticator.create();
    expect((await addPasskey(person, authenticator)).status).toBe(303);
    const { res, visitor } = await signInWith(authenticator);
    expect(res.headers.location).toBe('/dashboard');
    const passwordOnly = `/confirm-password?return_to=${encodeURIComponent('/settings/security')}&with=password`;

    // Adding a passkey: the script is sent to confirm the password, where no passkey is offered.
    const csrf = await visitor.csrfFrom('/settings/security');
    const options = await visitor.post('/settings/passkeys/options', csrf);
    expect(options.body).toEqual({ confirmPassword: passwordOnly });
    const confirmPage = await visitor.textOf(passwordOnly);
    expect(confirmPage).toContain('This needs your password itself: a passkey cannot confirm it.');
    expect(confirmPage).not.toContain('Confirm with a passkey');
    const added = await visitor.post('/settings/passkeys', csrf, {
      name: 'Another',
      credential: JSON.stringify(madeUpRegistration(SoftAuthenticator.create(), origin)),
    });
    expect(added.headers.location).toBe(passwordOnly);

    // Two-factor sign-in: turning it off and new recovery codes wait for the password too.
    for (const action of ['/settings/two-factor/recovery-codes', '/settings/two-factor/disable']) {
      expect((await visitor.submit('/settings/security', action)).headers.location).toBe(
        passwordOnly,
      );
    }
    // A passkey confirmation, posted all the same, does not do: the action is asked again.
    const confirmCsrf = await visitor.csrfFrom(
      '/confirm-password?return_to=%2Fsettings%2Fsecurity',
    );
    const challenge = await visitor.post('/confirm-password/passkey/options', confirmCsrf);
    const byPasskey = await visitor.post('/confirm-password/passkey', confirmCsrf, {
      credential: JSON.stringify(authenticator.authenticate(challenge.body, origin)),
      return_to: '/settings/security',
    });
    expect(byPasskey.headers.location).toBe('/confirm-password/continue');
    expect((await visitor.resume()).headers.location).toBe(passwordOnly);
    const credentials = t.dataSource.getRepository(TwoFactorCredential);
    expect(await credentials.countBy({ userId: person.user.id })).toBe(1);
    expect(await passkeysOf(person.user.id)).toHaveLength(1);

    // The password does.
    const typed = await visitor.submit(passwordOnly, '/confirm-password', {
      password: person.password,
      return_to: '/settings/security',
    });
    expect(typed.headers.location).toBe('/confirm-password/continue');
    expect((await visitor.resume()).headers.location).toBe('/settings/security');
    expect(await credentials.countBy({ userId: person.user.id })).toBe(0);
    expect((await addPasskeyFrom(t, visitor, SoftAuthenticator.create(), 'Second')).status).toBe(
      303,
    );
    expect(await passkeysOf(person.user.id)).toHaveLength(2);
  });

  it('should remove the passkeys with the other sessions only when asked, and log and mail it', async () => {
    const person = await signedInPerson(t, { name: 'Sid Sessions' });
    const authenticators = [SoftAuthenticator.create(), SoftAuthenticator.create()];
    expect((await addPasskey(person, authenticators[0], 'Phone')).status).toBe(303);
    expect((await addPasskey(person, authenticators[1], 'Stolen laptop')).status).toBe(303);
    const elsewhere = async () => {
      const other = new WebClient(t.server, t.mail);
      expect((await other.login(person.email)).headers.location).toBe('/dashboard');
      return other;
    };

    // Not asked: the sessions go, the passkeys stay.
    const first = await elsewhere();
    expect(await person.client.textOf('/settings/sessions')).toContain(
      'Remove my passkeys too (2)',
    );
    const kept = await person.client.submit(
      '/settings/sessions',
      '/settings/sessions/revoke-others',
      {
        password: person.password,
      },
    );
    expect(kept.headers.location).toBe('/settings/sessions');
    expect(await signedIn(first)).toBe(false);
    expect(await passkeysOf(person.user.id)).toHaveLength(2);

    // Asked: both go, each in the security log, and one mail names them.
    const second = await elsewhere();
    const removed = await person.client.submit(
      '/settings/sessions',
      '/settings/sessions/revoke-others',
      { password: person.password, remove_passkeys: 'on' },
    );
    expect(removed.headers.location).toBe('/settings/sessions');
    expect(await person.client.textOf('/settings/sessions')).toContain(
      '1 other session has been signed out, and your 2 passkeys removed.',
    );
    expect(await signedIn(second)).toBe(false);
    expect(await passkeysOf(person.user.id)).toEqual([]);
    await t.app.get(Scheduler).drain();
    const events = await t.dataSource
      .getRepository(AuditEvent)
      .findBy({ userId: person.user.id, event: 'account.passkey_removed' });
    expect(
      events.map((e) => JSON.parse(e.detail ?? '{}')).sort((a, b) => a.name.localeCompare(b.name)),
    ).toEqual([
      { name: 'Phone', because: 'signed out everywhere else' },
      { name: 'Stolen laptop', because: 'signed out everywhere else' },
    ]);
    const mail = await t.mail.waitFor({
      to: person.email,
      subject: 'The passkeys of your Tessera account were removed',
    });
    expect(mail.text).toContain('"Phone", "Stolen laptop"');
    for (const authenticator of authenticators) {
      expect((await signInWith(authenticator)).res.headers.location).toBe('/login');
    }
  });

  it('should refuse a 21st passkey and keep challenges bounded to one per session and purpose', async () => {
    const person = await signedInPerson(t, { name: 'Max Many' });
    for (let i = 0; i < 20; i++) {
      expect((await addPasskey(person, SoftAuthenticator.create(), `Key ${i}`)).status).toBe(303);
    }
    const csrf = await person.client.csrfFrom('/settings/security');
    const refused = await person.client.post('/settings/passkeys/options', csrf);
    expect(refused.status).not.toBe(200);
    expect(await passkeysOf(person.user.id)).toHaveLength(20);

    const visitor = new WebClient(t.server, t.mail);
    const loginCsrf = await visitor.csrfFrom('/login');
    for (let i = 0; i < 5; i++) await visitor.post('/login/passkey/options', loginCsrf);
    const handles = await t.dataSource
      .getRepository(PasskeyChallenge)
      .findBy({ purpose: 'sign-in' });
    expect(new Set(handles.map((h) => h.sessionHandle)).size).toBe(handles.length);
  });
});

describe('passkeys where addresses are not confirmed (EMAIL_VERIFICATION=off)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_ENABLED: 'false', EMAIL_VERIFICATION: 'off' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('should remove a passkey planted before the owner took the account back with a password reset, and say so', async () => {
    // Someone signs up with another person's address, signs in and adds a passkey.
    const { email, userId, intruder } = await registeredByAnother(t, 'planted');
    const planted = SoftAuthenticator.create();
    expect((await addPasskeyFrom(t, intruder, planted, 'Planted')).status).toBe(303);
    expect(await t.dataSource.getRepository(Passkey).countBy({ userId })).toBe(1);

    // The owner takes it back with "Forgot your password?" and turns on two-factor sign-in.
    const owner = new WebClient(t.server, t.mail);
    await owner.submit('/forgot-password', '/forgot-password', { email });
    const reset = await t.mail.waitFor({ to: email, subject: 'Reset your Tessera password' });
    const link = TestSmtpServer.linkPath(reset, '/reset-password/');
    const fresh = 'the owner took it back';
    const done = await owner.submit(link, link, { password: fresh, password_confirmation: fresh });
    expect(done.headers.location).toBe('/login');
    expect((await owner.login(email, fresh)).headers.location).toBe('/dashboard');
    const { done: enabled } = await turnOnTwoFactorOnPages(t, { client: owner });
    expect(enabled.status).toBe(200);

    // The planted passkey signs nothing in: the reset removed it, and the notice says so.
    expect(await t.dataSource.getRepository(Passkey).countBy({ userId })).toBe(0);
    const attempt = await passkeySignIn(t, planted);
    expect(attempt.res.headers.location).toBe('/login');
    expect(await attempt.visitor.textOf('/login')).toContain(REFUSED);
    expect((await attempt.visitor.get('/dashboard')).headers.location).toBe('/login');
    expect((await intruder.get('/dashboard')).headers.location).toBe('/login?session_ended=1');
    const notice = await t.mail.waitFor({
      to: email,
      subject: 'Your Tessera password was changed',
    });
    expect(notice.text).toContain('Its passkey was removed too');
    expect(notice.html).toContain('Its passkey was removed too');
    await t.app.get(Scheduler).drain();
    const removed = await t.dataSource
      .getRepository(AuditEvent)
      .findBy({ userId, event: 'account.passkey_removed' });
    expect(removed.map((e) => JSON.parse(e.detail ?? '{}'))).toEqual([
      { name: 'Planted', because: 'password reset' },
    ]);
  });

  /**
   * Adds a passkey from `from` while, between the passkey's check and its write, `meanwhile`
   * runs (a reset, or signing out everywhere else): as a request in flight would.
   */
  async function addingAsItEnds(
    from: WebClient,
    authenticator: SoftAuthenticator,
    meanwhile: () => Promise<{ status: number }>,
  ) {
    const challenges = t.app.get(PasskeyChallenges);
    const take = challenges.take.bind(challenges);
    let ended: number | undefined;
    jest.spyOn(challenges, 'take').mockImplementation(async (...args) => {
      const taken = await take(...args);
      if (args[2] === 'register' && ended === undefined) ended = (await meanwhile()).status;
      return taken;
    });
    try {
      return { res: await addPasskeyFrom(t, from, authenticator, 'In flight'), ended };
    } finally {
      jest.restoreAllMocks();
    }
  }

  it("should add no passkey from a session that the owner's reset ended while it was being added", async () => {
    const { email, userId, intruder } = await registeredByAnother(t, 'inflight');
    const { owner, link } = await resetLinkFor(t, email);
    const fresh = 'the owner took it back';

    const planted = SoftAuthenticator.create();
    const { res, ended } = await addingAsItEnds(intruder, planted, () =>
      owner.submit(link, link, { password: fresh, password_confirmation: fresh }),
    );
    expect(ended).toBe(303);
    expect(res.headers.location).toMatch(/^\/login/);
    expect(await t.dataSource.getRepository(Passkey).countBy({ userId })).toBe(0);
    expect((await passkeySignIn(t, planted)).res.headers.location).toBe('/login');
  });

  it('should add no passkey from a session signed out, passkeys and all, while it was being added', async () => {
    const person = await signedInPerson(t);
    const other = new WebClient(t.server, t.mail);
    expect((await other.login(person.email, person.password)).headers.location).toBe('/dashboard');
    const planted = SoftAuthenticator.create();
    const { res, ended } = await addingAsItEnds(other, planted, () =>
      person.client.submit('/settings/sessions', '/settings/sessions/revoke-others', {
        password: person.password,
        remove_passkeys: 'on',
      }),
    );
    expect(ended).toBe(303);
    expect(res.headers.location).toMatch(/^\/login/);
    expect(await t.dataSource.getRepository(Passkey).countBy({ userId: person.user.id })).toBe(0);
    expect((await passkeySignIn(t, planted)).res.headers.location).toBe('/login');
  });
});

describe('passkey limits and expiry', () => {
  let t: TestApp;
  let origin: string;
  const clock = new ManualClock();

  beforeAll(async () => {
    t = await createTestApp(
      {
        RATE_LIMIT_SIGN_IN: '3',
        RATE_LIMIT_PASSKEY_CHALLENGES_PER_HOUR: '4',
        // Each request its own client address, as the limits count them.
        TRUST_PROXY: 'loopback',
      },
      { clock },
    );
    origin = new URL(t.config.app.publicUrl).origin;
  });
  beforeEach(() => clock.set(Date.now()));
  afterAll(async () => {
    await t.close();
  });

  it('should refuse an answer to a challenge older than five minutes', async () => {
    const person = await signedInPerson(t, { name: 'Ola Old' });
    const authenticator = SoftAuthenticator.create();
    const csrf = await person.client.csrfFrom('/settings/security');
    const options = await person.client
      .post('/settings/passkeys/options', csrf)
      .set('X-Forwarded-For', '203.0.113.9');
    clock.advance(5 * 60_000 + 1_000);
    const late = await person.client.post('/settings/passkeys', csrf, {
      name: 'Late',
      credential: JSON.stringify(authenticator.register(options.body, origin)),
    });
    expect(late.headers.location).toBe('/settings/security');
    expect(await person.client.textOf('/settings/security')).toContain(REFUSED);
    expect(await t.dataSource.getRepository(Passkey).countBy({ userId: person.user.id })).toBe(0);
  });

  it('should count passkey answers sent at once with failed sign-ins, and challenges per address', async () => {
    const person = await signedInPerson(t, { name: 'Lim Iter' });
    const authenticator = SoftAuthenticator.create();
    const csrf = await person.client.csrfFrom('/settings/security');
    const options = await person.client
      .post('/settings/passkeys/options', csrf)
      .set('X-Forwarded-For', '203.0.113.10');
    await person.client.post('/settings/passkeys', csrf, {
      name: 'Key',
      credential: JSON.stringify(authenticator.register(options.body, origin)),
    });

    // Ten wrong answers from one address at once: three are checked, the rest refused unchecked.
    const visitors = Array.from({ length: 10 }, () => new WebClient(t.server, t.mail));
    const prepared: { visitor: WebClient; visitorCsrf: string; credential: string }[] = [];
    for (const [i, visitor] of visitors.entries()) {
      const visitorCsrf = await visitor.csrfFrom('/login');
      const challenge = await visitor
        .post('/login/passkey/options', visitorCsrf)
        .set('X-Forwarded-For', `198.51.100.${i}`);
      const credential = JSON.stringify(
        authenticator.authenticate(challenge.body, origin, { rpId: 'evil.example' }),
      );
      prepared.push({ visitor, visitorCsrf, credential });
    }
    const answers = await burst(10, t.server, (i) =>
      prepared[i].visitor
        .post('/login/passkey', prepared[i].visitorCsrf, { credential: prepared[i].credential })
        .set('X-Forwarded-For', '192.0.2.77'),
    );
    expect(tally(answers, (r) => String(r.status))).toEqual({ '303': 3, '429': 7 });

    // Challenges: four an hour from one address.
    const asker = new WebClient(t.server, t.mail);
    const askerCsrf = await asker.csrfFrom('/login');
    const asked = await burst(6, t.server, () =>
      asker.post('/login/passkey/options', askerCsrf).set('X-Forwarded-For', '192.0.2.88'),
    );
    expect(tally(asked, (r) => String(r.status))).toEqual({ '200': 4, '429': 2 });
  });
});

describe('passkey challenges under a burst', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_ENABLED: 'false' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('should answer every one of a burst of sign-in challenges, leaving expired ones to the scheduler', async () => {
    const challenges = t.dataSource.getRepository(PasskeyChallenge);
    const past = new Date(Date.now() - 60_000);
    await challenges.insert(
      Array.from({ length: 300 }, (_, i) => ({
        challenge: `expired-${i}`,
        sessionHandle: `gone-${i}`,
        purpose: 'sign-in' as const,
        userId: null,
        expiresAt: past,
      })),
    );
    const visitors = await Promise.all(
      Array.from({ length: 40 }, async () => {
        const visitor = new WebClient(t.server, t.mail);
        return { visitor, csrf: await visitor.csrfFrom('/login') };
      }),
    );
    for (let round = 0; round < 5; round++) {
      const answers = await burst(visitors.length, t.server, (i) =>
        visitors[i].visitor.post('/login/passkey/options', visitors[i].csrf),
      );
      expect(tally(answers, (r) => String(r.status))).toEqual({ '200': visitors.length });
    }
    // One live challenge per visitor; the expired ones are the scheduler's to delete, not theirs.
    expect(await challenges.countBy({ expiresAt: MoreThan(new Date()) })).toBe(visitors.length);
    expect(await challenges.countBy({ expiresAt: LessThan(new Date()) })).toBe(300);
    expect(await t.app.get(PasskeyChallenges).prune()).toBe(300);
    expect(await challenges.count()).toBe(visitors.length);
  });
});
