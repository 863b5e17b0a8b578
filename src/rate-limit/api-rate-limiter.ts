import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
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

  /** Before authentication: refuses a client IP that is out of failures. */
  async checkClient(req: Request, res: Response): Promise<void> {
    const limit = this.config.security.rateLimit.anonymousPerIp;
    const window = (await this.storage.peek(this.clientKey(req))) ?? {
      count: 0,
      resetMs: this.windowMs,
    };
    this.report(res, limit, window);
    if (window.count >= limit) throw new RateLimitedError(seconds(window.resetMs));
  }

  /** After a failed authentication: one more failure for the client IP. */
  async countFailure(req: Request, res: Response): Promise<void> {
    const limit = this.config.security.rateLimit.anonymousPerIp;
    const window = await this.storage.hit(this.clientKey(req), this.windowMs);
    this.report(res, limit, window);
    if (window.count > limit) throw new RateLimitedError(seconds(window.resetMs));
  }

  /** After a successful authentication: one more request on the token's budget. */
  async countToken(tokenId: number, res: Response): Promise<void> {
    const limit = this.config.security.rateLimit.perToken;
    const window = await this.storage.hit(`api-token:${tokenId}`, this.windowMs);
    this.report(res, limit, window);
    if (window.count > limit) throw new RateLimitedError(seconds(window.resetMs));
  }

  private clientKey(req: Request): string {
    return `api-client:${req.ip ?? 'unknown'}`;
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
