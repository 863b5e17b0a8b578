import { DomainError } from '../common/errors/domain.error.js';

export class RateLimitedError extends DomainError {
  readonly code = 'rate_limited';
  readonly status = 429;
  /** `message`: the refusal in words a person can act on, where there is more to say. */
  constructor(
    override readonly retryAfterSeconds: number,
    message = `Too many requests. Try again in ${retryAfterSeconds} second${retryAfterSeconds === 1 ? '' : 's'}.`,
  ) {
    super(message);
  }
}
