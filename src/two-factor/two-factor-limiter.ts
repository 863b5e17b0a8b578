import { Inject, Injectable } from '@nestjs/common';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { RateLimitStorage } from '../rate-limit/rate-limit.storage.js';
import { ReservedAttempt, reserveAttempt } from '../rate-limit/reserved-attempt.js';
import { TooManyTwoFactorAttemptsError } from './two-factor.errors.js';

/** Wrong codes are counted for this long. */
export const TWO_FACTOR_WINDOW_MS = 15 * 60_000;

/**
 * Wrong second-factor codes, counted per pending sign-in and per account over 15 minutes. Past
 * RATE_LIMIT_TWO_FACTOR of either, codes are refused unchecked: a six-digit code with three
 * steps accepted is a 1-in-333,333 guess, and this keeps an attacker who has the password to a
 * handful of guesses per quarter hour, however many sign-ins they start or codes they send at
 * once. Each code is counted before it is checked and given back when it was right.
 */
@Injectable()
export class TwoFactorLimiter {
  constructor(
    @Inject(CONFIG) private readonly config: Config,
    private readonly storage: RateLimitStorage,
  ) {}

  async reserve(userId: number, attempt: string): Promise<ReservedAttempt> {
    const { enabled, twoFactorAttempts: limit } = this.config.security.rateLimit;
    if (!enabled) return ReservedAttempt.uncounted;
    return reserveAttempt(
      this.storage,
      'two-factor',
      [`2fa-account:${userId}`, `2fa-attempt:${attempt}`].map((key) => ({
        key,
        windowMs: TWO_FACTOR_WINDOW_MS,
        limit,
      })),
      (windows) => windows.find((w) => w.count > limit),
      (seconds) => new TooManyTwoFactorAttemptsError(seconds),
    );
  }
}
