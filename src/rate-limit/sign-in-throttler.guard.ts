import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { normalizeEmail } from '../users/email.js';
import { RateLimitedError } from './rate-limit.errors.js';
import { RateLimitStorage } from './rate-limit.storage.js';

/**
 * Sign-in attempts per account and per client IP, every attempt counted. Over either limit the
 * answer is the same, so it tells nothing about which one, or about the account.
 */
@Injectable()
export class SignInThrottlerGuard implements CanActivate {
  constructor(
    @Inject(CONFIG) private readonly config: Config,
    private readonly storage: RateLimitStorage,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const { enabled, windowSeconds, signInAttempts } = this.config.security.rateLimit;
    if (!enabled) return true;
    const req = context.switchToHttp().getRequest<Request>();
    const email = normalizeEmail(
      String((req.body as { email?: unknown } | undefined)?.email ?? ''),
    );
    const windows = await Promise.all([
      this.storage.hit(`sign-in-ip:${req.ip ?? 'unknown'}`, windowSeconds * 1000),
      this.storage.hit(`sign-in-account:${email}`, windowSeconds * 1000),
    ]);
    const over = windows.filter((w) => w.count > signInAttempts);
    if (over.length > 0) {
      throw new RateLimitedError(Math.max(1, ...over.map((w) => Math.ceil(w.resetMs / 1000))));
    }
    return true;
  }
}
