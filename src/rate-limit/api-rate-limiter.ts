import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { clientKeyOf } from './client-address.js';
import { RateLimitedError } from './rate-limit.errors.js';
import { RateLimitStorage, type WindowCount } from './rate-limit.storage.js';

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
   * Before authentication: refuses a client IP that is out of failures. Each check returns a
   * promise only when the counters live in Redis; in process it is done before it returns.
   */
  checkClient(req: Request, res: Response): void | Promise<void> {
    const limit = this.config.security.rateLimit.anonymousPerIp;
    return settle(this.storage.peek(this.clientKey(req)), (window) => {
      // Only a refusal reports here: authentication reports the budget that then applies.
      if (window && window.count >= limit) this.admit(res, limit, window, window.count);
    });
  }

  /** After a failed authentication: one more failure for the client IP. */
  countFailure(req: Request, res: Response): void | Promise<void> {
    const limit = this.config.security.rateLimit.anonymousPerIp;
    return settle(this.storage.hit(this.clientKey(req), this.windowMs), (window) =>
      this.admit(res, limit, window, window.count - 1),
    );
  }

  /** After a successful authentication: one more request on the token's budget. */
  countToken(tokenId: number, res: Response): void | Promise<void> {
    const limit = this.config.security.rateLimit.perToken;
    return settle(this.storage.hit(`api-token:${tokenId}`, this.windowMs), (window) =>
      this.admit(res, limit, window, window.count - 1),
    );
  }

  /** Reports the window; refuses when `used` (the hits before this one) leaves no room. */
  private admit(res: Response, limit: number, window: WindowCount, used: number): void {
    this.report(res, limit, window);
    if (used >= limit) throw new RateLimitedError(seconds(window.resetMs));
  }

  private clientKey(req: Request): string {
    return `api-client:${clientKeyOf(req.ip)}`;
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
function settle<T>(value: T | Promise<T>, then: (value: T) => void): void | Promise<void> {
  return value instanceof Promise ? value.then(then) : then(value);
}
