import { ConflictError, DomainError } from '../common/errors/domain.error.js';

export class TwoFactorAlreadyEnabledError extends ConflictError {
  constructor() {
    super(
      'two_factor_enabled',
      'Two-factor sign-in is already on. Turn it off first to change it.',
    );
  }
}

export class TwoFactorNotEnabledError extends ConflictError {
  constructor() {
    super('two_factor_not_enabled', 'Two-factor sign-in is not on.');
  }
}

/** New recovery codes were made since the page asking for others was drawn: those stand. */
export class RecoveryCodesChangedError extends ConflictError {
  constructor() {
    super(
      'recovery_codes_changed',
      'New recovery codes were made a moment ago (in another tab, or by a second click): the ones shown then are the ones that work. If you did not keep them, make new ones again.',
    );
  }
}

/** The setup to confirm is gone: never started, expired, or already confirmed. */
export class TwoFactorSetupExpiredError extends DomainError {
  readonly code = 'two_factor_setup_expired';
  constructor() {
    super('The two-factor setup has expired. Start again.');
  }
}

/** Too many wrong codes for one sign-in or one account. */
export class TooManyTwoFactorAttemptsError extends DomainError {
  readonly code = 'rate_limited';
  constructor(override readonly retryAfterSeconds: number) {
    const minutes = Math.ceil(retryAfterSeconds / 60);
    super(`Too many wrong codes. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`);
  }
}
