import { Inject, Injectable } from '@nestjs/common';
import type { Config } from '../config/config.js';
import type { RateLimitConfig } from '../config/security.config.js';
import { CONFIG } from '../config/config.module.js';
import { RateLimitedError } from './rate-limit.errors.js';
import type { LimitKind } from './limit-kinds.js';
import { RateLimitStorage } from './rate-limit.storage.js';

const HOUR_MS = 3_600_000;

/** What one account may ask for so many times an hour, whatever it asks it of. */
const ACCOUNT_LIMITS = {
  'email-change': (c: RateLimitConfig) => c.emailChangesPerHour,
  'webhook-tests': (c: RateLimitConfig) => c.webhookTestsPerHour,
} as const satisfies Partial<Record<LimitKind, unknown>>;

export type AccountLimitName = keyof typeof ACCOUNT_LIMITS;

function refusal(what: string, retryAfterSeconds: number): RateLimitedError {
  const minutes = Math.ceil(retryAfterSeconds / 60);
  return new RateLimitedError(
    retryAfterSeconds,
    `You have ${what} too often. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
  );
}

/**
 * Limits on what one signed-in account asks for, counted per account before the work is done
 * (one atomic step: of requests sent together, no more than the limit get through), whatever
 * the addresses or values each one names.
 */
@Injectable()
export class AccountLimiter {
  constructor(
    @Inject(CONFIG) private readonly config: Config,
    private readonly storage: RateLimitStorage,
  ) {}

  /** `what`: the request in words, for the refusal ("asked to change your address"). */
  async consume(name: AccountLimitName, userId: number, what: string): Promise<void> {
    const rateLimit = this.config.security.rateLimit;
    if (!rateLimit.enabled) return;
    const limit = ACCOUNT_LIMITS[name](rateLimit);
    const window = await this.storage.hit(`account:${name}:${userId}`, HOUR_MS, name, limit);
    if (window.count > limit) {
      throw refusal(what, Math.max(1, Math.ceil(window.resetMs / 1000)));
    }
  }
}
