import { DomainError } from '../common/errors/domain.error.js';

export class RateLimitedError extends DomainError {
  readonly code = 'rate_limited';
  readonly status = 429;
  constructor(override readonly retryAfterSeconds: number) {
    super(
      `Too many requests. Try again in ${retryAfterSeconds} second${retryAfterSeconds === 1 ? '' : 's'}.`,
    );
  }
}
