import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { DataSource, In, LessThan, MoreThan, type EntityManager } from 'typeorm';
import { isUniqueViolation } from '../common/errors/database-errors.js';
import { PasskeyChallenge, type ChallengePurpose } from './passkey-challenge.entity.js';
import { PasskeyUserHandle } from './passkey-user-handle.entity.js';
import { Passkey } from './passkey.entity.js';

/** What a passkey's row holds when it is added. */
export type NewPasskey = Pick<
  Passkey,
  | 'userId'
  | 'credentialId'
  | 'publicKey'
  | 'counter'
  | 'transports'
  | 'deviceType'
  | 'backedUp'
  | 'aaguid'
  | 'name'
>;

/** A challenge as handed out: for a purpose, to one session, maybe for one person. */
export interface ChallengeClaim {
  challenge: string;
  sessionHandle: string;
  purpose: ChallengePurpose;
  userId: number | null;
}

@Injectable()
export class PasskeysRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get passkeys() {
    return this.dataSource.getRepository(Passkey);
  }

  /** The person's passkeys, oldest first. */
  findForUser(userId: number): Promise<Passkey[]> {
    return this.passkeys.find({ where: { userId }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  findForOwner(userId: number, id: number): Promise<Passkey | null> {
    return this.passkeys.findOneBy({ userId, id });
  }

  findByCredentialId(credentialId: string): Promise<Passkey | null> {
    return this.passkeys.findOneBy({ credentialId });
  }

  countForUser(manager: EntityManager, userId: number): Promise<number> {
    return manager.getRepository(Passkey).countBy({ userId });
  }

  async insert(manager: EntityManager, passkey: NewPasskey): Promise<Passkey> {
    const { identifiers } = await manager.getRepository(Passkey).insert(passkey);
    return manager.getRepository(Passkey).findOneByOrFail({ id: identifiers[0].id });
  }

  /** Renames one of the person's passkeys; whether it was theirs. */
  async rename(manager: EntityManager, userId: number, id: number, name: string): Promise<boolean> {
    const result = await manager.getRepository(Passkey).update({ userId, id }, { name });
    return result.affected === 1;
  }

  /**
   * Removes every passkey of the person's; the names of those removed. Call it with the
   * person's row locked, so that a passkey added meanwhile is either named or left alone.
   */
  async removeAllForUser(manager: EntityManager, userId: number): Promise<string[]> {
    const sqlite = manager.connection.options.type === 'better-sqlite3';
    // A locking read: every passkey committed by now, not those of the transaction's snapshot.
    const rows = await manager.getRepository(Passkey).find({
      where: { userId },
      select: { id: true, name: true },
      order: { id: 'ASC' },
      ...(sqlite ? {} : { lock: { mode: 'pessimistic_write' as const } }),
    });
    if (rows.length === 0) return [];
    await manager.getRepository(Passkey).delete({ userId, id: In(rows.map((r) => r.id)) });
    return rows.map((r) => r.name);
  }

  /** Removes one of the person's passkeys; whether this call removed it. */
  async remove(manager: EntityManager, userId: number, id: number): Promise<boolean> {
    return ((await manager.getRepository(Passkey).delete({ userId, id })).affected ?? 0) === 1;
  }

  /**
   * Records a use: the counter moves from what was read to what the authenticator said, only
   * if nobody moved it meanwhile (of two uses with one counter value, one is accepted).
   */
  async recordUse(
    manager: EntityManager,
    passkey: Passkey,
    next: { counter: number; backedUp: boolean; at: Date },
  ): Promise<boolean> {
    const result = await manager
      .getRepository(Passkey)
      .update(
        { id: passkey.id, counter: passkey.counter },
        { counter: next.counter, backedUp: next.backedUp, lastUsedAt: next.at },
      );
    return result.affected === 1;
  }

  /** The person's user handle, if they have one. */
  async findHandle(userId: number): Promise<string | null> {
    const found = await this.dataSource.getRepository(PasskeyUserHandle).findOneBy({ userId });
    return found?.handle ?? null;
  }

  /** Gives the person a user handle (random, 32 bytes) unless another request just did. */
  async insertHandle(manager: EntityManager, userId: number): Promise<void> {
    try {
      await manager
        .getRepository(PasskeyUserHandle)
        .insert({ userId, handle: randomBytes(32).toString('base64url') });
    } catch (error) {
      // Made by another request at the same moment: that one is the person's.
      if (!isUniqueViolation(error)) throw error;
    }
  }

  /** Whose the handle is. */
  async userOfHandle(handle: string): Promise<number | null> {
    const row = await this.dataSource.getRepository(PasskeyUserHandle).findOneBy({ handle });
    return row?.userId ?? null;
  }

  /** Deletes the session's challenge for `purpose`, if it has one (asking again replaces it). */
  async dropChallenge(
    manager: EntityManager,
    sessionHandle: string,
    purpose: ChallengePurpose,
  ): Promise<void> {
    await manager.getRepository(PasskeyChallenge).delete({ sessionHandle, purpose });
  }

  async insertChallenge(
    manager: EntityManager,
    claim: ChallengeClaim,
    expiresAt: Date,
  ): Promise<void> {
    await manager.getRepository(PasskeyChallenge).insert({ ...claim, expiresAt });
  }

  /** Deletes every challenge past its time, any session's; how many. */
  async deleteExpiredChallenges(manager: EntityManager, now: Date): Promise<number> {
    const result = await manager.getRepository(PasskeyChallenge).delete({
      expiresAt: LessThan(now),
    });
    return result.affected ?? 0;
  }

  /**
   * Takes the challenge if it was handed out to this session, for this purpose (and person),
   * and is still valid: one DELETE, so of two answers carrying it, one gets it.
   */
  async takeChallenge(manager: EntityManager, claim: ChallengeClaim, now: Date): Promise<boolean> {
    const result = await manager.getRepository(PasskeyChallenge).delete({
      challenge: claim.challenge,
      sessionHandle: claim.sessionHandle,
      purpose: claim.purpose,
      ...(claim.userId === null ? {} : { userId: claim.userId }),
      expiresAt: MoreThan(now),
    });
    return result.affected === 1;
  }
}
