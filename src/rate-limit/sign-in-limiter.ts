import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { clientKeyOf } from './client-address.js';
import { ReservedAttempt, reserveAttempt } from './reserved-attempt.js';
import { RateLimitStorage } from './rate-limit.storage.js';

/**
 * Failed sign-ins (and passwords typed again in sudo mode), counted per client IP, per account,
 * and per account from each IP. Only failures count, so that:
 * - an IP that keeps failing is refused, whichever accounts it tries;
 * - an account under attack refuses the IPs that failed on it, while its owner, signing in from
 *   an IP with no failure on it, still gets in (nobody can lock an account by failing on it);
 * - the answer is the same for an account that does not exist.
 * Each attempt is counted before its password is checked and given back when it was right, so
 * attempts sent at the same moment cannot all pass a look at the count. The email must already
 * be validated and normalised; it is stored only as a digest.
 */
@Injectable()
export class SignInLimiter {
  constructor(
    @Inject(CONFIG) private readonly config: Config,
    private readonly storage: RateLimitStorage,
  ) {}

  /**
   * Counts the attempt, or refuses it unchecked when the client is over a limit. `kind`: a
   * sign-in, or a password typed again in sudo mode (the same counters; the metrics tell them
   * apart).
   */
  async reserve(
    email: string,
    ip: string | undefined,
    kind: 'sign-in' | 'sudo' = 'sign-in',
  ): Promise<ReservedAttempt> {
    const { enabled, signInAttempts: limit, windowSeconds } = this.config.security.rateLimit;
    if (!enabled) return ReservedAttempt.uncounted;
    const windowMs = windowSeconds * 1000;
    const keys = this.keys(email, ip);
    return reserveAttempt(
      this.storage,
      kind,
      [keys.ip, keys.account, keys.pair].map((key) => ({ key, windowMs, limit })),
      ([byIp, byAccount, byPair]) =>
        byIp.count > limit
          ? byIp
          : // This IP has failed on the account before (its pair counts more than this attempt).
            byAccount.count > limit && byPair.count > 1
            ? byAccount
            : undefined,
    );
  }

  /**
   * Counts a passkey attempt against the client IP alone (which account it is for is known only
   * once its signature is checked): the same counter failed passwords use, so a client cannot
   * try passwords and passkeys to twice the limit.
   */
  async reserveClient(ip: string | undefined): Promise<ReservedAttempt> {
    const { enabled, signInAttempts: limit, windowSeconds } = this.config.security.rateLimit;
    if (!enabled) return ReservedAttempt.uncounted;
    const key = `sign-in-ip:${clientKeyOf(ip)}`;
    return reserveAttempt(
      this.storage,
      'passkey',
      [{ key, windowMs: windowSeconds * 1000, limit }],
      ([byIp]) => (byIp.count > limit ? byIp : undefined),
    );
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
