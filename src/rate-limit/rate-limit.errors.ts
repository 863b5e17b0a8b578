import { DomainError } from '../common/errors/domain.error.js';

/** A wait as a person reads it: seconds up to two minutes, then minutes, then hours (rounded up). */
export function waitInWords(seconds: number): string {
  const [count, unit] =
    seconds < 120
      ? [seconds, 'second']
      : seconds < 7_200
        ? [Math.ceil(seconds / 60), 'minute']
        : [Math.ceil(seconds / 3_600), 'hour'];
  return `${count} ${unit}${count === 1 ? '' : 's'}`;
}

export class RateLimitedError extends DomainError {
  readonly code = 'rate_limited';
  /** `message`: the refusal in words a person can act on, where there is more to say. */
  constructor(
    override readonly retryAfterSeconds: number,
    message = `Too many requests. Try again in ${waitInWords(retryAfterSeconds)}.`,
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
