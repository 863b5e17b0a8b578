import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, LessThan, MoreThan, Not } from 'typeorm';
import { Session } from './session.entity.js';
import { sessionHandle } from './session-digests.js';
import type { Actor } from '../common/actor.js';

@Injectable()
export class SessionsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** A new session's row, stored by the request that made it. */
  async insert(manager: EntityManager, row: Omit<Session, 'createdAt' | 'user'>): Promise<void> {
    await manager.getRepository(Session).insert(row);
  }

  /**
   * Writes a session back, only if its row still exists: a session deleted meanwhile (signed
   * out, revoked from the Sessions page, ended by a password change) is not brought back. Its
   * `userId` is always the data's: a page's session is read with the person that column names.
   */
  async update(manager: EntityManager, row: Omit<Session, 'createdAt' | 'user'>): Promise<void> {
    const { id, ...fields } = row;
    await manager.getRepository(Session).update({ id }, fields);
  }

  /** Moves the expiry forward, unless it was moved less than `slackMs` ago (saves a write per page). */
  async extend(
    manager: EntityManager,
    id: string,
    expiresAt: Date,
    slackMs: number,
  ): Promise<void> {
    await manager
      .getRepository(Session)
      .update({ id, expiresAt: LessThan(new Date(expiresAt.getTime() - slackMs)) }, { expiresAt });
  }

  /** Deletes the session; false when it was gone already (signed out by a request before). */
  async delete(manager: EntityManager, id: string): Promise<boolean> {
    const result = await manager.getRepository(Session).delete({ id });
    return (result.affected ?? 0) > 0;
  }

  /** The account's signed-in sessions that have not expired, the most recently active first. */
  findLiveForUser(userId: number, now: Date, manager?: EntityManager): Promise<Session[]> {
    return (manager ?? this.dataSource.manager).getRepository(Session).find({
      // Its data for one fact only: whether it was kept signed in.
      select: {
        id: true,
        userAgent: true,
        ip: true,
        lastActiveAt: true,
        createdAt: true,
        data: true,
      },
      where: { userId, expiresAt: MoreThan(now) },
      order: { lastActiveAt: 'DESC', createdAt: 'DESC' },
    });
  }

  /**
   * Whether `actor` acts through a browser session that has ended since its request arrived
   * (signed out, revoked, ended by a reset), as committed now; anyone else: false. A session
   * still there is marked active at `now`: a write, not a read, so that a cluster certifies it
   * against a sign-out's or a reset's delete of the row made through another node at the same
   * moment (a row lock reaches no other node), and one of the two is run again. Call it with
   * the person's row locked, which a reset and signing out everywhere else take first too.
   */
  async hasEnded(manager: EntityManager, actor: Actor, now: Date): Promise<boolean> {
    if (actor.kind !== 'person' || actor.session === null) return false;
    const rows = await manager
      .getRepository(Session)
      .find({ select: { id: true }, where: { userId: actor.userId } });
    const own = rows.find((row) => sessionHandle(row.id) === actor.session);
    if (!own) return true;
    const marked = await manager
      .getRepository(Session)
      .update({ id: own.id, userId: actor.userId }, { lastActiveAt: now });
    return (marked.affected ?? 0) === 0;
  }

  /** Signs the account out everywhere but in the session `keepId`. */
  async deleteOthersForUser(
    manager: EntityManager,
    userId: number,
    keepId: string,
  ): Promise<number> {
    const result = await manager.getRepository(Session).delete({ userId, id: Not(keepId) });
    return result.affected ?? 0;
  }

  /** Ends one session of the account; false when it has no such session. */
  async deleteForOwner(manager: EntityManager, userId: number, id: string): Promise<boolean> {
    const result = await manager.getRepository(Session).delete({ userId, id });
    return (result.affected ?? 0) > 0;
  }

  /** Signs the account out everywhere. */
  async deleteForUser(manager: EntityManager, userId: number): Promise<number> {
    const result = await manager.getRepository(Session).delete({ userId });
    return result.affected ?? 0;
  }

  async deleteExpired(manager: EntityManager, now: Date): Promise<number> {
    const result = await manager.getRepository(Session).delete({ expiresAt: LessThan(now) });
    return result.affected ?? 0;
  }
}
