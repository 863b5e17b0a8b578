import type { SessionData } from 'express-session';
import { flash } from '../common/web/flash.js';
import { TwoFactorSetupExpiredError } from './two-factor.errors.js';

/** How long a started setup waits for its confirming code. */
export const SETUP_MS = 15 * 60_000;

type SetupHolder = Pick<SessionData, 'twoFactorSetup' | 'flash'>;

/** Keeps a setup's sealed secret in the session: the confirming form never carries it. */
export function keepSetup(session: SetupHolder, secret: string, now = Date.now()): void {
  session.twoFactorSetup = { secret, startedAt: now };
}

export function clearSetup(session: SetupHolder): void {
  delete session.twoFactorSetup;
}

export function hasSetup(session: SetupHolder, now = Date.now()): boolean {
  const setup = session.twoFactorSetup;
  return setup !== undefined && now - setup.startedAt < SETUP_MS;
}

/**
 * The sealed secret of the setup under way; when there is none (never started, expired or
 * confirmed) the person goes back to the security page, told why if it expired.
 */
export function setupOf(session: SetupHolder, now = Date.now()): string {
  const setup = session.twoFactorSetup;
  if (setup && hasSetup(session, now)) return setup.secret;
  if (setup) {
    clearSetup(session);
    flash(session, { error: 'The two-factor setup expired. Start again.' });
  }
  throw new TwoFactorSetupExpiredError();
}
