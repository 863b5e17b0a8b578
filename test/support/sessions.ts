import { RECENT_PASSWORD_MS } from '../../src/web/sudo-mode.js';
import type { ManualClock } from '../../src/clock/clock.js';

/**
 * Moves the app's clock past sudo mode's 15 minutes: every password typed so far (and every
 * passkey used) was typed too long ago for a sensitive action. Sessions stay signed in.
 */
export function forgetPasswordConfirmation(clock: ManualClock): void {
  clock.advance(RECENT_PASSWORD_MS);
}
