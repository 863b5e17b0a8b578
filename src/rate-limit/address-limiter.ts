import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { RateLimitStorage } from './rate-limit.storage.js';

const HOUR_MS = 3_600_000;

/**
 * How much account mail (reset links, notices of a registration attempt) anyone can have sent
 * to one address: RATE_LIMIT_MAIL_PER_ADDRESS_PER_HOUR of each kind. Past it the mail is not
 * sent, and the page answers as ever, so the limit says nothing about whether the address has
 * an account. Every call counts, whatever becomes of it; the address is stored as a digest.
 */
@Injectable()
export class AddressLimiter {
  constructor(
    @Inject(CONFIG) private readonly config: Config,
    private readonly storage: RateLimitStorage,
  ) {}

  /** `email` validated and normalised. */
  async allow(kind: string, email: string): Promise<boolean> {
    const { enabled, accountMailsPerAddressPerHour: limit } = this.config.security.rateLimit;
    if (!enabled) return true;
    const address = createHash('sha256').update(email).digest('base64url').slice(0, 22);
    const window = await this.storage.hit(
      `mail:${kind}:${address}`,
      HOUR_MS,
      'account-mail',
      limit,
    );
    return window.count <= limit;
  }
}
