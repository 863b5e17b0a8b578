import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { Transactions } from '../database/transactions.js';
import type { OneTimeLink, LinkPurpose } from './one-time-link.entity.js';
import type { LinkProblem } from './one-time-links.errors.js';
import { OneTimeLinksRepository } from './one-time-links.repository.js';
import { Clock } from '../clock/clock.js';
import { Scheduler } from '../scheduler/scheduler.js';

/** 32 random bytes in base64url: what a link carries. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;
const PRUNE_EVERY_MS = 3_600_000;
/** Dead tokens are kept a week, so a late click still hears "expired" or "used". */
const KEEP_DEAD_MS = 7 * 86_400_000;

export type LinkCheck =
  | { ok: true; token: OneTimeLink }
  /** `token`: the row, when the link named one (used or expired). */
  | { ok: false; problem: LinkProblem; token?: OneTimeLink };

const hashOf = (plaintext: string): string => createHash('sha256').update(plaintext).digest('hex');
const newToken = (): string => randomBytes(32).toString('base64url');

/**
 * Single-use tokens for the links mailed to people (confirming an address, resetting a
 * password): random, stored only as their SHA-256, valid until they expire or are used, and
 * replaced, for one account and purpose, by the next one issued.
 */
@Injectable()
export class OneTimeLinks implements OnModuleInit {
  private readonly logger = new Logger('OneTimeLinks');

  constructor(
    private readonly tokens: OneTimeLinksRepository,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly scheduler: Scheduler,
  ) {}

  /**
   * A new token for the user; the plaintext exists only in what is returned. `email`: the
   * address the link is for, when it sets one (an e-mail change).
   */
  async issue(
    manager: EntityManager,
    userId: number,
    purpose: LinkPurpose,
    ttlMs: number,
    email: string | null = null,
  ): Promise<string> {
    const plaintext = newToken();
    await this.insert(manager, userId, purpose, ttlMs, email, hashOf(plaintext));
    return plaintext;
  }

  /**
   * Holds the place of a link whose message is made later, replacing the user's unused ones of
   * the purpose: it counts as waiting at once, and cancelling it stops the message, but no one
   * has a token for it until `reissue` gives one to the message. Returns its id.
   */
  reserve(
    manager: EntityManager,
    userId: number,
    purpose: LinkPurpose,
    ttlMs: number,
    email: string | null = null,
  ): Promise<number> {
    return this.insert(manager, userId, purpose, ttlMs, email, hashOf(newToken()));
  }

  /**
   * A new token for link `id`, for the message being made: the token before stops working.
   * Null once the link was used, cancelled, replaced or has expired: there is nothing to send.
   */
  async reissue(
    manager: EntityManager,
    id: number,
    purpose: LinkPurpose,
  ): Promise<{ token: string; link: OneTimeLink } | null> {
    const link = await this.tokens.findUsableById(manager, id, purpose, this.clock.now());
    if (!link) return null;
    const token = newToken();
    return (await this.tokens.rehash(manager, id, hashOf(token))) ? { token, link } : null;
  }

  private insert(
    manager: EntityManager,
    userId: number,
    purpose: LinkPurpose,
    ttlMs: number,
    email: string | null,
    tokenHash: string,
  ): Promise<number> {
    const now = this.clock.nowMs();
    return this.tokens.insertReplacing(manager, {
      userId,
      purpose,
      tokenHash,
      // Made and ending by the app's clock, so its lifetime is the one asked for.
      createdAt: new Date(now),
      expiresAt: new Date(now + ttlMs),
      email,
    });
  }

  /**
   * Cancels the user's unused links of the purpose, inside `manager`'s transaction: a change of
   * password or address makes the reset links mailed before it worthless.
   */
  async cancel(manager: EntityManager, userId: number, purpose: LinkPurpose): Promise<void> {
    await this.tokens.deleteUnused(manager, userId, purpose);
  }

  /**
   * Cancels the user's unused links of the purpose, as `cancel` does; true for the one caller
   * that found some (of two at once, the other finds none).
   */
  async cancelPending(
    manager: EntityManager,
    userId: number,
    purpose: LinkPurpose,
  ): Promise<boolean> {
    return (await this.tokens.deleteUnused(manager, userId, purpose)) > 0;
  }

  /** The user's link of the purpose that still works, if one does. */
  pending(userId: number, purpose: LinkPurpose): Promise<OneTimeLink | null> {
    return this.tokens.findUsable(userId, purpose, this.clock.now());
  }

  /** Whether the token could be used now; a malformed one costs no query. */
  async check(
    plaintext: string,
    purpose: LinkPurpose,
    manager?: EntityManager,
  ): Promise<LinkCheck> {
    if (!TOKEN_SHAPE.test(plaintext)) return { ok: false, problem: 'unknown' };
    const token = await this.tokens.findByHash(hashOf(plaintext), purpose, manager);
    if (!token) return { ok: false, problem: 'unknown' };
    if (token.usedAt) return { ok: false, problem: 'used', token };
    if (token.expiresAt.getTime() <= this.clock.nowMs())
      return { ok: false, problem: 'expired', token };
    return { ok: true, token };
  }

  /** Uses the token inside `manager`'s transaction: of two uses at once, one wins. */
  async use(manager: EntityManager, plaintext: string, purpose: LinkPurpose): Promise<LinkCheck> {
    const checked = await this.check(plaintext, purpose, manager);
    if (!checked.ok) return checked;
    const won = await this.tokens.markUsed(manager, checked.token.id, this.clock.now());
    return won ? checked : { ok: false, problem: 'used', token: checked.token };
  }

  onModuleInit(): void {
    this.scheduler.every('dead account links', PRUNE_EVERY_MS, () => this.prune());
  }

  async prune(): Promise<number> {
    try {
      const before = new Date(this.clock.nowMs() - KEEP_DEAD_MS);
      return await this.transactions.run((m) => this.tokens.deleteExpired(m, before));
    } catch (error) {
      this.logger.warn(`Could not prune expired one-time links: ${String(error)}`);
      return 0;
    }
  }
}
