import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { clientKeyOf } from './client-address.js';
import { RateLimitedError } from './rate-limit.errors.js';
import { RateLimitStorage, type WindowCount } from './rate-limit.storage.js';

/**
 * Failed sign-ins, counted per client IP, per account, and per account from each IP. Only
 * failures count, so that:
 * - an IP that keeps failing is refused, whichever accounts it tries;
 * - an account under attack refuses the IPs that failed on it, while its owner, signing in from
 *   an IP with no failure on it, still gets in (nobody can lock an account by failing on it);
 * - the answer is the same for an account that does not exist.
 * The email must already be validated and normalised; it is stored only as a digest.
 */
@Injectable()
export class SignInLimiter {
  constructor(
    @Inject(CONFIG) private readonly config: Config,
    private readonly storage: RateLimitStorage,
  ) {}

  /** Refuses the attempt before the password is checked, if the client is over a limit. */
  async assertAllowed(email: string, ip: string | undefined): Promise<void> {
    const { enabled, signInAttempts: limit } = this.config.security.rateLimit;
    if (!enabled) return;
    const keys = this.keys(email, ip);
    const [byIp, byAccount, byPair] = await Promise.all([
      this.storage.peek(keys.ip),
      this.storage.peek(keys.account),
      this.storage.peek(keys.pair),
    ]);
    if (byIp && byIp.count >= limit) throw refusal(byIp);
    if (byAccount && byAccount.count >= limit && byPair) throw refusal(byAccount);
  }

  async recordFailure(email: string, ip: string | undefined): Promise<void> {
    const { enabled, windowSeconds } = this.config.security.rateLimit;
    if (!enabled) return;
    const keys = this.keys(email, ip);
    const windowMs = windowSeconds * 1000;
    await Promise.all([
      this.storage.hit(keys.ip, windowMs),
      this.storage.hit(keys.account, windowMs),
      this.storage.hit(keys.pair, windowMs),
    ]);
  }

  private keys(email: string, ip: string | undefined) {
    const account = createHash('sha256').update(email).digest('base64url').slice(0, 22);
    const client = clientKeyOf(ip);
    return {
      ip: `sign-in-ip:${client}`,
      account: `sign-in-account:${account}`,
      pair: `sign-in-pair:${account}:${client}`,
    };
  }
}

function refusal(window: WindowCount): RateLimitedError {
  return new RateLimitedError(Math.max(1, Math.ceil(window.resetMs / 1000)));
}
