import type { Server } from 'node:http';
import { Actors } from '../../src/common/actor.js';
import { Secret, TOTP } from 'otpauth';
import { Clock } from '../../src/clock/clock.js';
import { TwoFactorService } from '../../src/two-factor/two-factor.service.js';
import { visibleText } from './html.js';
import type { SignedInPerson } from './people.js';
import type { TestApp } from './test-app.js';
import { WebClient } from './web-client.js';

export const CHALLENGE = '/two-factor-challenge';

export interface TwoFactorSecret {
  secret: string;
  recoveryCodes: string[];
  /** The app's code `steps` 30-second steps from the app's now (0: the code it shows now). */
  code(steps?: number): string;
}

/** The base32 secret a setup page shows, to be typed into an authenticator app. */
export function totpSecretIn(html: string): string | undefined {
  return /id="totp-secret"[^>]*>\s*([A-Z2-7]+)\s*</.exec(html)?.[1];
}

/** The code an authenticator app shows for `secret` at the app's time, `steps` 30-second steps on. */
export function totpCodeAt(t: Pick<TestApp, 'app'>, secret: string, steps = 0): string {
  return TOTP.generate({
    secret: Secret.fromBase32(secret),
    timestamp: t.app.get(Clock).nowMs() + steps * 30_000,
  });
}

/** The recovery codes of a page: one per `<li>` inside `#recovery-codes`. */
export function recoveryCodesOf(html: string): string[] {
  const list = /id="recovery-codes"[^>]*>([\s\S]*?)<\/ul>/.exec(html)?.[1] ?? '';
  return [...list.matchAll(/<li>([\s\S]*?)<\/li>/g)].map((m) => visibleText(m[1]));
}

/**
 * Turns two-factor sign-in on for the person through the pages, as they would: the setup page
 * from the security page, then the code the secret it shows gives at the app's time. Returns
 * both answers, the secret and the recovery codes shown.
 */
export async function turnOnTwoFactorOnPages(
  t: Pick<TestApp, 'app'>,
  person: Pick<SignedInPerson, 'client'>,
) {
  const setup = await person.client.submit('/settings/security', '/settings/two-factor');
  const secret = totpSecretIn(setup.text);
  if (!secret) throw new Error(`no secret on the setup page (status ${setup.status})`);
  const code = totpCodeAt(t, secret);
  const done = await person.client.submit('/settings/two-factor', '/settings/two-factor/confirm', {
    code,
  });
  return { setup, done, secret, recoveryCodes: recoveryCodesOf(done.text) };
}

/**
 * Turns two-factor sign-in on for the person through the service, as the setup pages do, with
 * the code of the current step at the app's time (which therefore cannot sign in: use `code(1)`
 * for that).
 */
export async function turnOnTwoFactor(
  t: Pick<TestApp, 'app'>,
  person: Pick<SignedInPerson, 'user' | 'email'>,
): Promise<TwoFactorSecret> {
  const twoFactor = t.app.get(TwoFactorService);
  const who = Actors.person(person.user.id);
  const sealed = await twoFactor.beginSetup(who);
  const { secret } = twoFactor.describeSetup(who, sealed, person.email);
  const code = (steps = 0) => totpCodeAt(t, secret, steps);
  const recoveryCodes = await twoFactor.confirm(who, sealed, code());
  return { secret, recoveryCodes, code };
}

/**
 * Signs the person out and types their password again (asking to go to `returnTo` once signed
 * in): half signed in, at the challenge. Returns the sign-in form's answer.
 */
export async function atTheChallenge(person: SignedInPerson, returnTo?: string) {
  if ((await person.client.get('/dashboard')).status === 200) {
    await person.client.submit('/dashboard', '/logout');
  }
  const res = await person.client.submit('/login', '/login', {
    email: person.email,
    password: person.password,
    ...(returnTo ? { return_to: returnTo } : {}),
  });
  if (res.headers.location !== CHALLENGE) {
    throw new Error(`the password did not lead to the challenge: ${res.status}`);
  }
  return res;
}

/**
 * `count` browsers of the person, each half signed in (at the challenge) on the servers in
 * turn, each with its challenge form's CSRF token.
 */
export function atTheChallengeIn(
  person: SignedInPerson,
  servers: Server[],
  count: number,
): Promise<{ client: WebClient; csrf: string }[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const client = new WebClient(servers[i % servers.length]);
      await atTheChallenge({ ...person, client });
      return { client, csrf: await client.csrfFrom(CHALLENGE) };
    }),
  );
}
