import { Injectable } from '@nestjs/common';
import { In, LessThan, type EntityManager } from 'typeorm';
import { claimDueRows, nextChanceOf, releaseRows, type Claim } from '../database/leased-rows.js';
import { OutboxMessage } from './outbox-message.entity.js';

/** The outbox's rows; a claimed row is changed only by the instance that holds its lease. */
@Injectable()
export class OutboxRepository {
  async insert(
    manager: EntityManager,
    row: Pick<OutboxMessage, 'kind' | 'recipient' | 'params' | 'nextAttemptAt'>,
  ): Promise<void> {
    // One statement: no read-back of the generated id and defaults.
    await manager
      .getRepository(OutboxMessage)
      .createQueryBuilder()
      .insert()
      .values({ ...row, status: 'pending', attempts: 0 })
      .updateEntity(false)
      .execute();
  }

  /** Takes up to `limit` due messages that nobody holds, for `owner` (see `claimDueRows`). */
  claimDue(manager: EntityManager, claim: Claim): Promise<OutboxMessage[]> {
    return claimDueRows(manager, OutboxMessage, claim);
  }

  /**
   * When a pending message may next be claimed: the earliest retry of a message nobody holds, or
   * the end of the earliest lease (its holder may have stopped before it finished). Null when
   * nothing is pending.
   */
  nextChance(manager: EntityManager): Promise<Date | null> {
    return nextChanceOf(manager, OutboxMessage);
  }

  /**
   * Renews `owner`'s lease on the message while it is still pending, in the transaction that
   * makes it: false once it was withdrawn (or the lease lost). The write holds the row until that
   * transaction ends, so a withdrawal waits for a message being made, or is seen by it, on every
   * node of a cluster (which certifies writes, not locks).
   */
  async renewIfPending(
    manager: EntityManager,
    message: Pick<OutboxMessage, 'id'>,
    owner: string,
    until: Date,
  ): Promise<boolean> {
    const result = await manager
      .getRepository(OutboxMessage)
      .update({ id: message.id, claimedBy: owner, status: 'pending' }, { claimedUntil: until });
    return (result.affected ?? 0) > 0;
  }

  /** Drops the `kind` messages to `recipient` not yet sent; returns how many. */
  async withdraw(manager: EntityManager, kind: string, recipient: string): Promise<number> {
    const result = await manager
      .getRepository(OutboxMessage)
      .update({ kind, recipient, status: 'pending' }, { status: 'dropped' });
    return result.affected ?? 0;
  }

  /** Ends the message's life as `status`; false when the lease was lost to another instance. */
  async finish(
    manager: EntityManager,
    message: Pick<OutboxMessage, 'id'>,
    owner: string,
    outcome: { status: 'sent' | 'dropped' | 'failed'; at: Date; error?: string },
  ): Promise<boolean> {
    const result = await manager.getRepository(OutboxMessage).update(
      { id: message.id, claimedBy: owner },
      {
        status: outcome.status,
        sentAt: outcome.status === 'sent' ? outcome.at : null,
        lastError: outcome.error ?? null,
        claimedUntil: null,
        claimedBy: null,
      },
    );
    return (result.affected ?? 0) > 0;
  }

  /** Gives the message back for another try at `nextAttemptAt`. */
  async retryLater(
    manager: EntityManager,
    message: Pick<OutboxMessage, 'id'>,
    owner: string,
    nextAttemptAt: Date,
    error: string,
  ): Promise<void> {
    await manager
      .getRepository(OutboxMessage)
      .update(
        { id: message.id, claimedBy: owner },
        { nextAttemptAt, lastError: error, claimedUntil: null, claimedBy: null },
      );
  }

  /** Hands back, untried, messages claimed but not yet sent (at shutdown). */
  release(manager: EntityManager, ids: number[], owner: string): Promise<void> {
    return releaseRows(manager, OutboxMessage, ids, owner);
  }

  /** Deletes messages sent, dropped or given up on before `before`. */
  async pruneFinished(manager: EntityManager, before: Date): Promise<number> {
    const result = await manager
      .getRepository(OutboxMessage)
      .delete({ status: In(['sent', 'dropped', 'failed']), createdAt: LessThan(before) });
    return result.affected ?? 0;
  }
}
