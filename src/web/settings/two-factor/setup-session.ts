import { Injectable } from '@nestjs/common';
import { flash, type PageSessionData } from '../../session/page-session.js';
import { Clock } from '../../../clock/clock.js';
import { TwoFactorSetupExpiredError } from '../../../two-factor/two-factor.errors.js';

/** How long a started setup waits for its confirming code. */
export const SETUP_MS = 15 * 60_000;

type SetupHolder = Pick<PageSessionData, 'twoFactorSetup' | 'flash'>;

/** A two-factor setup under way, kept in the session: the confirming form never carries it. */
@Injectable()
export class TwoFactorSetups {
  constructor(private readonly clock: Clock) {}

  /** Keeps a setup's sealed secret in the session. */
  keep(session: SetupHolder, secret: string): void {
    session.twoFactorSetup = { secret, startedAt: this.clock.nowMs() };
  }

  clear(session: SetupHolder): void {
    delete session.twoFactorSetup;
  }

  has(session: SetupHolder): boolean {
    const setup = session.twoFactorSetup;
    return setup !== undefined && this.clock.nowMs() - setup.startedAt < SETUP_MS;
  }

  /**
   * The sealed secret of the setup under way; when there is none (never started, expired or
   * confirmed) the person goes back to the security page, told why if it expired.
   */
  of(session: SetupHolder): string {
    const setup = session.twoFactorSetup;
    if (setup && this.has(session)) return setup.secret;
    if (setup) {
      this.clear(session);
      flash(session, { error: 'The two-factor setup expired. Start again.' });
    }
    throw new TwoFactorSetupExpiredError();
  }
}
