import { Inject, Injectable } from '@nestjs/common';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { RateLimitStorage, type WindowCount } from '../rate-limit/rate-limit.storage.js';
import { TooManyTwoFactorAttemptsError } from './two-factor.errors.js';

/** Wrong codes are counted for this long. */
export const TWO_FACTOR_WINDOW_MS = 15 * 60_000;

/**
 * Wrong second-factor codes, counted per pending sign-in and per account over 15 minutes. Past
 * RATE_LIMIT_TWO_FACTOR of either, codes are refused unchecked: a six-digit code with three
 * steps accepted is a 1-in-333,333 guess, and this keeps an attacker who has the password to a
 * handful of guesses per quarter hour, however many sign-ins they start.
 */
@Injectable()
export class TwoFactorLimiter {
  constructor(
    @Inject(CONFIG) private readonly config: Config,
    private readonly storage: RateLimitStorage,
  ) {}

  async assertAllowed(userId: number, attempt: string): Promise<void> {
    const { enabled, twoFactorAttempts: limit } = this.config.security.rateLimit;
    if (!enabled) return;
    const windows = await Promise.all(this.keys(userId, attempt).map((k) => this.storage.peek(k)));
    const over = windows.find((w): w is WindowCount => w !== null && w.count >= limit);
    if (over) throw new TooManyTwoFactorAttemptsError(Math.max(1, Math.ceil(over.resetMs / 1000)));
  }

  async recordFailure(userId: number, attempt: string): Promise<void> {
    if (!this.config.security.rateLimit.enabled) return;
    await Promise.all(
      this.keys(userId, attempt).map((k) => this.storage.hit(k, TWO_FACTOR_WINDOW_MS)),
    );
  }

  private keys(userId: number, attempt: string): string[] {
    return [`2fa-account:${userId}`, `2fa-attempt:${attempt}`];
  }
}
