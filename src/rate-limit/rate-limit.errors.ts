import { DomainError } from '../common/errors/domain.error.js';

export class RateLimitedError extends DomainError {
  readonly code = 'rate_limited';
  /** `message`: the refusal in words a person can act on, where there is more to say. */
  constructor(
    override readonly retryAfterSeconds: number,
    message = `Too many requests. Try again in ${retryAfterSeconds} second${retryAfterSeconds === 1 ? '' : 's'}.`,
  ) {
    super(message);
  }
}

/** When a client may try again after a limit could not count its attempt. */
export const UNCOUNTED_RETRY_SECONDS = 5;

/**
 * A limit that refuses what it cannot count (sign-in, two-factor, mail to others) while its
 * counters in Redis cannot be reached: the attempt is not checked and nothing is sent.
 */
export class LimitsUnavailableError extends DomainError {
  readonly code = 'service_unavailable';
  override readonly retryAfterSeconds = UNCOUNTED_RETRY_SECONDS;
  constructor() {
    super(
      `Tessera cannot count attempts right now, so it did not take this one. Try again in ${UNCOUNTED_RETRY_SECONDS} seconds.`,
    );
  }
}
