import { Inject, Injectable } from '@nestjs/common';
import type { Response } from 'express';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { clientKeyOf } from './client-address.js';
import { RateLimitedError } from './rate-limit.errors.js';
import { RateLimitStorage, type WindowCount } from './rate-limit.storage.js';

/** An API request's attempt, counted against its client before the token is looked up. */
export interface ClientAttempt {
  key: string;
  window: WindowCount;
}

/**
 * The API's limits: each valid token has its own budget; requests with a missing or bad token
 * share one per client IP, and an IP that has used it up is refused before its next token is
 * looked up, so guessing is slow even though each guess is cheap. Every answer says where the
 * client stands (RateLimit-Limit, -Remaining, -Reset).
 */
@Injectable()
export class ApiRateLimiter {
  private readonly windowMs: number;

  constructor(
    @Inject(CONFIG) private readonly config: Config,
    private readonly storage: RateLimitStorage,
  ) {
    this.windowMs = config.security.rateLimit.windowSeconds * 1000;
  }

  get enabled(): boolean {
    return this.config.security.rateLimit.enabled;
  }

  /**
   * Before authentication: counts the attempt as a failure of the client IP, in one atomic step,
   * or refuses it unchecked when the IP has no failures left. Of requests sent at the same
   * moment, no more than the limit get their token looked up. A failure keeps the attempt
   * (`reportFailure`); a success gives it back (`admitToken`).
   */
  reserveClient(ip: string | undefined, res: Response): ClientAttempt | Promise<ClientAttempt> {
    const limit = this.config.security.rateLimit.anonymousPerIp;
    const key = `api-client:${clientKeyOf(ip)}`;
    return settle(this.storage.hit(key, this.windowMs), (window) => {
      if (window.count <= limit) return { key, window };
      this.report(res, limit, window);
      return settle(this.storage.release(key), () => {
        throw new RateLimitedError(seconds(window.resetMs));
      });
    });
  }

  /** After a failed authentication: the reserved attempt stays counted; the answer says so. */
  reportFailure(res: Response, attempt: ClientAttempt): void {
    this.report(res, this.config.security.rateLimit.anonymousPerIp, attempt.window);
  }

  /** The attempt was not checked (the database failed, say): it does not count. */
  giveBack(attempt: ClientAttempt): void | Promise<void> {
    return this.storage.release(attempt.key);
  }

  /**
   * After a successful authentication: the client's reserved attempt is given back, and the
   * request counts on the token's budget instead.
   */
  admitToken(attempt: ClientAttempt, tokenId: number, res: Response): void | Promise<void> {
    const limit = this.config.security.rateLimit.perToken;
    const released = this.storage.release(attempt.key);
    const counted = settle(this.storage.hit(`api-token:${tokenId}`, this.windowMs), (window) =>
      this.admit(res, limit, window, window.count - 1),
    );
    return released instanceof Promise ? Promise.all([released, counted]).then(() => {}) : counted;
  }

  /** Reports the window; refuses when `used` (the hits before this one) leaves no room. */
  private admit(res: Response, limit: number, window: WindowCount, used: number): void {
    this.report(res, limit, window);
    if (used >= limit) throw new RateLimitedError(seconds(window.resetMs));
  }

  private report(res: Response, limit: number, window: WindowCount): void {
    res.setHeader('RateLimit-Limit', limit);
    res.setHeader('RateLimit-Remaining', Math.max(0, limit - window.count));
    res.setHeader('RateLimit-Reset', seconds(window.resetMs));
  }
}

function seconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/** Runs `then` on a value now, or once it arrives when it is a promise. */
function settle<T, R>(value: T | Promise<T>, then: (value: T) => R | Promise<R>): R | Promise<R> {
  return value instanceof Promise ? value.then(then) : then(value);
}
