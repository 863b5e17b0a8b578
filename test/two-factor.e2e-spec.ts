import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { Session } from '../src/auth/session.entity.js';
import { ManualClock } from '../src/clock/clock.js';
import { RecoveryCode } from '../src/two-factor/recovery-code.entity.js';
import { TwoFactorCredential } from '../src/two-factor/two-factor-credential.entity.js';
import { sessionIdOf, visibleText } from './support/html.js';
import { PASSWORD, signedInPerson, type SignedInPerson } from './support/people.js';
import { forgetPasswordConfirmation } from './support/sessions.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import {
  atTheChallenge,
  CHALLENGE,
  recoveryCodesOf,
  totpCodeAt,
  totpSecretIn,
  turnOnTwoFactor,
  turnOnTwoFactorOnPages,
} from './support/two-factor.js';
import { WebClient } from './support/web-client.js';

const STEP_MS = 30_000;

interface TwoFactorPerson extends SignedInPerson {
  /** The base32 secret read off the setup page, as a person would type it into their app. */
  secret: string;
  recoveryCodes: string[];
}

describe('two-factor sign-in (TOTP and recovery codes)', () => {
  let t: TestApp;
  const clock = new ManualClock();

  beforeAll(async () => {
    // Rate limits as in production: the wrong-code limit is part of what is tested.
    t = await createTestApp({}, { clock });
  });
  afterAll(async () => {
    await t.close();
  });

  const credentialOf = (person: SignedInPerson) =>
    t.dataSource.getRepository(TwoFactorCredential).findOneBy({ userId: person.user.id });
  const recoveryRowsOf = (person: SignedInPerson) =>
    t.dataSource.getRepository(RecoveryCode).findBy({ userId: person.user.id });

  /**
   * A code of the person's app the server has not accepted yet: the current step's, or the next
   * one's (still inside the window) when the current step was used already.
   */
  async function freshCode(person: TwoFactorPerson): Promise<string> {
    const last = (await credentialOf(person))?.lastUsedStep ?? -1;
    if (last > Math.floor(clock.nowMs() / STEP_MS)) {
      // Both steps the window allows are used: on to the next step.
      clock.advance(STEP_MS - (clock.nowMs() % STEP_MS));
    }
    const step = Math.max(last + 1, Math.floor(clock.nowMs() / STEP_MS));
    return TOTP.generate({ secret: Secret.fromBase32(person.secret), timestamp: step * STEP_MS });
  }

  /** A person who turned two-factor sign-in on through the pages, still signed in. */
  async function withTwoFactor(): Promise<TwoFactorPerson> {
    const person = await signedInPerson(t);
    const { setup, done, secret, recoveryCodes } = await turnOnTwoFactorOnPages(t, person);
    expect(setup.status).toBe(200);
    expect(done.status).toBe(200);
    return { ...person, secret, recoveryCodes };
  }

  /** Signs out, then types the password: half signed in, at the challenge. */
  async function passwordOnly(person: SignedInPerson, returnTo?: string) {
    const res = await atTheChallenge(person, returnTo);
    expect(`${res.status} ${res.headers.location}`).toBe(`303 ${CHALLENGE}`);
    return res;
  }

  const answer = (person: SignedInPerson, fields: Record<string, string>) =>
    person.client.submit(CHALLENGE, CHALLENGE, fields);

  it('should let a person without two-factor sign in with the password alone, as before', async () => {
    const person = await signedInPerson(t);
    expect(await person.client.textOf('/settings/security')).toContain(
      'Off Your password alone signs you in.',
    );
    await person.client.submit('/dashboard', '/logout');
    const res = await person.client.login(person.email);
    expect(`${res.status} ${res.headers.location}`).toBe('303 /dashboard');
    expect((await person.client.get(CHALLENGE)).headers.location).toBe('/dashboard');
  });

  it('should turn on only with a code from the secret shown, keeping the secret encrypted', async () => {
    const person = await signedInPerson(t);
    const security = await person.client.get('/settings/security');
    expect(security.text).toContain('href="/settings/security"');

    const setup = await person.client.submit('/settings/security', '/settings/two-factor');
    expect(setup.status).toBe(200);
    const secret = totpSecretIn(setup.text)!;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(setup.text).toMatch(/<svg[^>]*class="qr-code"[\s\S]*<\/svg>/);
    // Nothing stored yet, and the session holds the pending secret only encrypted.
    expect(await credentialOf(person)).toBeNull();
    const sessions = await t.dataSource.getRepository(Session).findBy({ userId: person.user.id });
    expect(sessions.map((s) => s.data).join()).toContain('twoFactorSetup');
    expect(sessions.map((s) => s.data).join()).not.toContain(secret);

    // The page shows the same pending setup again; a wrong code is refused with a message.
    expect(totpSecretIn((await person.client.get('/settings/two-factor')).text)).toBe(secret);
    const wrong = await person.client.submit(
      '/settings/two-factor',
      '/settings/two-factor/confirm',
      {
        code: '000000' === totpCodeAt(t, secret) ? '111111' : '000000',
      },
    );
    expect(`${wrong.status} ${wrong.headers.location}`).toBe('303 /settings/two-factor');
    const again = await person.client.get('/settings/two-factor');
    expect(visibleText(again.text)).toContain('That code is not right.');
    expect(again.text).not.toMatch(/name="code"[^>]*value=/);
    expect(await credentialOf(person)).toBeNull();

    // A secret posted with the form is not taken: the code must come from the session's secret.
    const own = new Secret({ size: 20 });
    const forged = await person.client.submit(
      '/settings/two-factor',
      '/settings/two-factor/confirm',
      {
        code: TOTP.generate({ secret: own }),
        secret: own.base32,
      },
    );
    expect(forged.headers.location).toBe('/settings/two-factor');
    expect(await credentialOf(person)).toBeNull();

    const done = await person.client.submit(
      '/settings/two-factor',
      '/settings/two-factor/confirm',
      { code: totpCodeAt(t, secret) },
    );
    expect(done.status).toBe(200);
    const codes = recoveryCodesOf(done.text);
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[0-9a-z]{4}(-[0-9a-z]{4}){3}$/);

    const credential = (await credentialOf(person))!;
    expect(credential.secret).toMatch(/^v1\./);
    expect(credential.secret).not.toContain(secret);
    expect(credential.lastUsedStep).toBeGreaterThan(0);
    const stored = (await recoveryRowsOf(person)).map((r) => r.codeHash).sort();
    const hashed = codes.map((c) => createHash('sha256').update(c.replace(/-/g, '')).digest('hex'));
    expect(stored).toEqual(hashed.sort());

    // Shown once: the setup is over, and the security page says two-factor is on.
    expect((await person.client.get('/settings/two-factor')).headers.location).toBe(
      '/settings/security',
    );
    const page = await person.client.textOf('/settings/security');
    expect(page).toContain('On since');
    expect(page).toContain('10 recovery codes left.');
    for (const code of codes) expect(page).not.toContain(code);
  });

  it('should keep the session signed in when asked with the password, once the code completes the sign-in', async () => {
    const person = await withTwoFactor();
    await person.client.submit('/dashboard', '/logout');
    const pending = await person.client.submit('/login', '/login', {
      email: person.email,
      password: person.password,
      remember: 'on',
    });
    expect(pending.headers.location).toBe(CHALLENGE);
    const res = await answer(person, { code: await freshCode(person) });
    expect(res.headers.location).toBe('/dashboard');
    expect(visibleText((await person.client.get('/settings/sessions')).text)).toMatch(
      /This device Kept signed in/,
    );
  });

  it('should ask for a code after the password, renew the session id, and go on to the page asked for', async () => {
    const person = await withTwoFactor();
    const pending = await passwordOnly(person, '/teams');
    // Half signed in is not signed in.
    expect((await person.client.get('/dashboard')).headers.location).toBe('/login');
    expect(visibleText((await person.client.get(CHALLENGE)).text)).toContain(
      'Open your authenticator app',
    );

    const code = await freshCode(person);
    const res = await answer(person, { code });
    expect(`${res.status} ${res.headers.location}`).toBe('303 /teams');
    const before = sessionIdOf(person.client.sessionCookie(pending)!);
    const after = sessionIdOf(person.client.sessionCookie(res)!);
    expect(after).not.toBe(before);
    expect((await person.client.get('/dashboard')).status).toBe(200);

    // The same code again, in a new sign-in, is refused: it was used.
    await passwordOnly(person);
    const reused = await answer(person, { code });
    expect(reused.headers.location).toBe(CHALLENGE);
    expect(await person.client.textOf(CHALLENGE)).toContain('That code has been used already.');
    expect((await person.client.get('/dashboard')).headers.location).toBe('/login');

    // A code the app showed minutes ago is answered as any wrong code is (no hint that it came
    // close); nonsense is told what is wanted.
    const old = totpCodeAt(t, person.secret, -5);
    await answer(person, { code: old });
    const answered = await person.client.textOf(CHALLENGE);
    expect(answered).toContain('That code is not right.');
    expect(answered).not.toContain('expired');
    await answer(person, { code: 'abc' });
    expect(await person.client.textOf(CHALLENGE)).toContain('Enter the 6-digit code');
    await answer(person, {});
    expect(await person.client.textOf(CHALLENGE)).toContain('or use a recovery code');
  });

  // On MySQL/MariaDB the two overlap in the database; SQLite runs them one after the other.
  it('should let only one of two sign-ins racing with the same code in', async () => {
    const person = await withTwoFactor();
    const other = new WebClient(t.server, t.mail);
    await passwordOnly(person);
    const res = await other.submit('/login', '/login', { email: person.email, password: PASSWORD });
    expect(res.headers.location).toBe(CHALLENGE);
    const [csrfA, csrfB] = await Promise.all([
      person.client.csrfFrom(CHALLENGE),
      other.csrfFrom(CHALLENGE),
    ]);
    const code = await freshCode(person);
    const answers = await Promise.all([
      person.client.post(CHALLENGE, csrfA, { code }),
      other.post(CHALLENGE, csrfB, { code }),
    ]);
    expect(answers.map((a) => a.headers.location).sort()).toEqual(['/dashboard', CHALLENGE]);
  });

  it('should sign in with a recovery code once, then never again with it', async () => {
    const person = await withTwoFactor();
    const [first] = person.recoveryCodes;
    await passwordOnly(person);
    // Typed as people type: capitals, no dashes.
    const res = await answer(person, { recovery_code: first.toUpperCase().replace(/-/g, '') });
    expect(`${res.status} ${res.headers.location}`).toBe('303 /dashboard');
    expect(await person.client.textOf('/dashboard')).toContain(
      'You signed in with a recovery code; it cannot be used again. 9 left',
    );
    const used = (await recoveryRowsOf(person)).filter((r) => r.usedAt !== null);
    expect(used).toHaveLength(1);
    expect(await person.client.textOf('/settings/security')).toContain('9 recovery codes left.');

    await passwordOnly(person);
    const again = await answer(person, { recovery_code: first });
    expect(again.headers.location).toBe(CHALLENGE);
    const page = await person.client.get(CHALLENGE);
    expect(visibleText(page.text)).toContain(
      'That recovery code is not valid, or it has been used.',
    );
    expect(page.text).toMatch(/<details class="recovery"\s+open/);
    expect((await person.client.get('/dashboard')).headers.location).toBe('/login');
  });

  it('should refuse codes unchecked after five wrong ones, per sign-in and per account', async () => {
    const person = await withTwoFactor();
    const stepBefore = (await credentialOf(person))!.lastUsedStep;
    await passwordOnly(person);
    const right = await freshCode(person);
    const wrong = right === '123456' ? '654321' : '123456';
    for (let i = 0; i < 5; i++) {
      const res = await answer(person, { code: wrong });
      expect(res.headers.location).toBe(CHALLENGE);
    }
    const refused = await answer(person, { code: right });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(visibleText(refused.text)).toContain('Too many wrong codes. Try again in 15 minutes.');
    // The right code was not even looked at, so it is still unused.
    expect((await credentialOf(person))!.lastUsedStep).toBe(stepBefore);

    // A new sign-in with the password does not start the count again: the account has one too.
    await passwordOnly(person);
    const fresh = await answer(person, { recovery_code: person.recoveryCodes[0] });
    expect(fresh.status).toBe(429);
    expect((await recoveryRowsOf(person)).every((r) => r.usedAt === null)).toBe(true);
  });

  it('should end a half-finished sign-in after five minutes', async () => {
    const person = await withTwoFactor();
    await passwordOnly(person, '/teams');
    const csrf = await person.client.csrfFrom(CHALLENGE);
    clock.advance(5 * 60_000 + 1000);

    const late = await person.client.post(CHALLENGE, csrf, { code: await freshCode(person) });
    expect(late.headers.location).toBe(`/login?return_to=${encodeURIComponent('/teams')}`);
    expect(await person.client.textOf('/login')).toContain('Signing in took too long.');
    expect((await person.client.get(CHALLENGE)).headers.location).toBe('/login');
    expect((await person.client.get('/dashboard')).headers.location).toBe('/login');
  });

  it('should make new recovery codes that replace the old ones, in sudo mode', async () => {
    const person = await withTwoFactor();
    const res = await person.client.submit(
      '/settings/security',
      '/settings/two-factor/recovery-codes',
    );
    expect(res.status).toBe(200);
    const fresh = recoveryCodesOf(res.text);
    expect(fresh).toHaveLength(10);
    expect(fresh.filter((c) => person.recoveryCodes.includes(c))).toEqual([]);
    expect(await recoveryRowsOf(person)).toHaveLength(10);

    await passwordOnly(person);
    const old = await answer(person, { recovery_code: person.recoveryCodes[1] });
    expect(old.headers.location).toBe(CHALLENGE);
    const ok = await answer(person, { recovery_code: fresh[1] });
    expect(ok.headers.location).toBe('/dashboard');
  });

  it('should turn off only with the password typed in the last 15 minutes', async () => {
    const person = await withTwoFactor();
    forgetPasswordConfirmation(clock);
    const asked = await person.client.submit('/settings/security', '/settings/two-factor/disable');
    // The password itself: a passkey does not vouch for changes to the second factor.
    expect(asked.headers.location).toBe(
      `/confirm-password?return_to=${encodeURIComponent('/settings/security')}&with=password`,
    );
    const newCodes = await person.client.submit(
      '/settings/security',
      '/settings/two-factor/recovery-codes',
    );
    expect(newCodes.headers.location).toBe(asked.headers.location);
    expect(await credentialOf(person)).not.toBeNull();

    // The last action asked for goes on once the password is confirmed.
    expect(await person.client.textOf(asked.headers.location)).toContain(
      'Waiting for your password: Make new recovery codes',
    );
    const confirmed = await person.client.submit(asked.headers.location, '/confirm-password', {
      password: PASSWORD,
      return_to: '/settings/security',
    });
    expect(confirmed.headers.location).toBe('/confirm-password/continue');
    const codes = await person.client.resume();
    expect(codes.status).toBe(200);
    expect(visibleText(codes.text)).toContain('Recovery codes');
    expect(await person.client.textOf('/confirm-password/continue')).toContain(
      'No action is waiting for your password',
    );
    const off = await person.client.submit('/settings/security', '/settings/two-factor/disable');
    expect(off.headers.location).toBe('/settings/security');
    expect(await person.client.textOf('/settings/security')).toContain(
      'Two-factor sign-in is off.',
    );
    expect(await credentialOf(person)).toBeNull();
    expect(await recoveryRowsOf(person)).toEqual([]);

    await person.client.submit('/dashboard', '/logout');
    const res = await person.client.login(person.email);
    expect(res.headers.location).toBe('/dashboard');
  });

  it('should refuse to start a second setup or make codes while it is off, with a message', async () => {
    const person = await withTwoFactor();
    const again = await person.client.submit('/settings/security', '/settings/two-factor');
    expect(again.headers.location).toBe('/settings/security');
    expect(await person.client.textOf('/settings/security')).toContain(
      'Two-factor sign-in is already on.',
    );

    const other = await signedInPerson(t);
    const codes = await other.client.submit(
      '/settings/security',
      '/settings/two-factor/recovery-codes',
    );
    expect(codes.headers.location).toBe('/settings/security');
    expect(await other.client.textOf('/settings/security')).toContain(
      'Two-factor sign-in is not on.',
    );
    const confirm = await other.client.submit(
      '/settings/security',
      '/settings/two-factor/confirm',
      {
        code: '123456',
      },
    );
    expect(confirm.headers.location).toBe('/settings/security');
    expect(await recoveryRowsOf(other)).toEqual([]);
  });

  it('should answer exactly as to any other wrong code when a code is a few steps off', async () => {
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
});
