import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull, LessThan, type EntityManager } from 'typeorm';
import { Clock } from '../../../clock/clock.js';
import { isUniqueViolation } from '../../../common/errors/database-errors.js';
import { Transactions } from '../../../database/transactions.js';
import { Scheduler } from '../../../scheduler/scheduler.js';
import { IdempotencyKey } from './idempotency-key.entity.js';

const HOUR_MS = 3_600_000;
/** How long a key holds its first answer. */
export const KEY_LIFETIME_MS = 24 * HOUR_MS;
/**
 * How long a request under way holds its key: longer than any request takes. Past it the
 * instance that claimed the key is taken to have died, and the next request acts instead.
 */
export const CLAIM_LEASE_MS = 60_000;
/** Answers longer than this are not kept (the key is let go instead): the column's bound. */
export const MAX_ANSWER_CHARS = 60_000;
const PRUNE_BATCH = 1000;

/** What claiming a key found. */
export type Claim =
  | { kind: 'claimed'; id: number }
  | { kind: 'answered'; status: number; answer: unknown }
  | { kind: 'in_progress' }
  | { kind: 'other_request' };

/**
 * The keys of the API's idempotent requests, shared by every instance through the database: a
 * key is claimed by inserting its row (the unique index on account and key decides, on any
 * instance), a row whose claim lapsed or that is over 24 hours old is taken over by a
 * conditional UPDATE (its affected-row count decides), and the answer is written to the row
 * before it is sent. Keys are pruned hourly.
 */
@Injectable()
export class IdempotencyStore implements OnApplicationBootstrap {
  private readonly logger = new Logger('Idempotency');

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly scheduler: Scheduler,
  ) {}

  onApplicationBootstrap(): void {
    this.scheduler.every('idempotency key pruning', HOUR_MS, async () => {
      const deleted = await this.prune();
      if (deleted > 0) this.logger.log(`${deleted} idempotency keys past 24 hours deleted`);
    });
  }

  /**
   * Claims the key for the request `requestHash` names, or says what became of the request that
   * claimed it first. A key stored with `storedBefore()` (the digest's earlier form, worked out
   * only when the stored digest differs) is the same request too.
   */
  async claim(
    userId: number,
    keyHash: string,
    requestHash: string,
    storedBefore?: () => string,
  ): Promise<Claim> {
    const now = this.clock.nowMs();
    const row = {
      userId,
      keyHash,
      requestHash,
      statusCode: null,
      answer: null,
      lockedUntil: new Date(now + CLAIM_LEASE_MS),
      createdAt: new Date(now),
    };
    try {
      const inserted = await this.transactions.runStatement((m) => this.repo(m).insert(row));
      return { kind: 'claimed', id: Number(inserted.identifiers[0].id) };
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
    const found = await this.repo().findOneBy({ userId, keyHash });
    // Pruned between the insert and the read: as good as never there, but another request got
    // in first; let the client try again.
    if (!found) return { kind: 'in_progress' };
    if (found.createdAt.getTime() <= now - KEY_LIFETIME_MS) {
      return this.takeOver(found.id, row, { createdAt: LessThan(new Date(now - KEY_LIFETIME_MS)) });
    }
    if (found.requestHash !== requestHash && found.requestHash !== storedBefore?.()) {
      return { kind: 'other_request' };
    }
    if (found.statusCode !== null) {
      return { kind: 'answered', status: found.statusCode, answer: JSON.parse(found.answer!) };
    }
    if (found.lockedUntil && found.lockedUntil.getTime() > now) return { kind: 'in_progress' };
    return this.takeOver(found.id, row, {
      statusCode: IsNull(),
      lockedUntil: LessThan(new Date(now)),
    });
  }

  /** Records the answer of the request that claimed the key; it is given again from now on. */
  async answer(id: number, status: number, answer: unknown): Promise<void> {
    const json = JSON.stringify(answer);
    if (json.length > MAX_ANSWER_CHARS) return this.release(id);
    await this.transactions.runStatement((m) =>
      this.repo(m).update({ id }, { statusCode: status, answer: json, lockedUntil: null }),
    );
  }

  /** Lets go of a key whose request failed on our side: the next request with it acts. */
  async release(id: number): Promise<void> {
    await this.transactions.runStatement((m) => this.repo(m).delete({ id, statusCode: IsNull() }));
  }

  /** Deletes keys older than 24 hours, in batches; returns how many went. */
  async prune(): Promise<number> {
    const before = new Date(this.clock.nowMs() - KEY_LIFETIME_MS);
    let deleted = 0;
    for (;;) {
      const rows = await this.repo().find({
        select: { id: true },
        where: { createdAt: LessThan(before) },
        order: { id: 'ASC' },
        take: PRUNE_BATCH,
      });
      if (rows.length === 0) return deleted;
      const result = await this.transactions.runStatement((m) =>
        this.repo(m).delete(rows.map((r) => r.id)),
      );
      deleted += result.affected ?? rows.length;
    }
  }

  /**
   * Claims a row whose claim lapsed or whose day is over, in one conditional UPDATE: the row
   * it writes no longer meets `still`, so of two requests taking it over at once, one does.
   */
  private async takeOver(
    id: number,
    row: Omit<IdempotencyKey, 'id' | 'user' | 'userId' | 'keyHash'>,
    still: Record<string, unknown>,
  ): Promise<Claim> {
    const { requestHash, statusCode, answer, lockedUntil, createdAt } = row;
    const done = await this.transactions.runStatement((m) =>
      this.repo(m).update(
        { id, ...still },
        { requestHash, statusCode, answer, lockedUntil, createdAt },
      ),
    );
    return done.affected ? { kind: 'claimed', id } : { kind: 'in_progress' };
  }

  private repo(manager: EntityManager = this.dataSource.manager) {
    return manager.getRepository(IdempotencyKey);
  }
}
