import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, LessThan, MoreThan, Not } from 'typeorm';
import { Session } from './session.entity.js';
import { CREDENTIAL_STAMP_KEY, sessionHandle } from './session-digests.js';
import type { Actor } from '../common/actor.js';

/** A session's row as a request writes it: its version is the repository's to count. */
export type SessionRow = Omit<Session, 'createdAt' | 'user' | 'version'>;

@Injectable()
export class SessionsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** A new session's row, stored by the request that made it (at version 0). */
  async insert(manager: EntityManager, row: SessionRow): Promise<void> {
    await manager.getRepository(Session).insert({ ...row, version: 0 });
  }

  /**
   * Writes a session back over the row read at `version`, only if the row still is that
   * version: false when another write came between (or the session was deleted meanwhile:
   * signed out, revoked from the Sessions page, ended by a password change, and not brought
   * back). Its `userId` is always the data's: a page's session is read with the person that
   * column names.
   */
  async update(manager: EntityManager, row: SessionRow, version: number): Promise<boolean> {
    const { id, ...fields } = row;
    const result = await manager
      .getRepository(Session)
      .update({ id, version }, { ...fields, version: version + 1 });
    return (result.affected ?? 0) > 0;
  }

  /** The session's data and version, its row locked until the transaction ends; null if gone. */
  async findForUpdate(
    manager: EntityManager,
    id: string,
  ): Promise<{ data: string; version: number } | null> {
    const sqlite = manager.connection.options.type === 'better-sqlite3';
    return manager.getRepository(Session).findOne({
      select: { id: true, data: true, version: true },
      where: { id },
      // SQLite's write transactions run one at a time: the row needs no lock of its own.
      ...(sqlite ? {} : { lock: { mode: 'pessimistic_write' as const } }),
    });
  }

  /**
   * The session stays signed in under a new password: its stamp is written in the change's own
   * transaction, so that no request of the session reads the new password with the old stamp.
   */
  async restamp(manager: EntityManager, id: string, stamp: string): Promise<void> {
    const current = await this.findForUpdate(manager, id);
    if (!current) return;
    const data = JSON.parse(current.data) as Record<string, unknown>;
    data[CREDENTIAL_STAMP_KEY] = stamp;
    await manager
      .getRepository(Session)
      .update({ id }, { data: JSON.stringify(data), version: current.version + 1 });
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
