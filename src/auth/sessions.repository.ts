import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, LessThan, MoreThan } from 'typeorm';
import { Session } from './session.entity.js';

@Injectable()
export class SessionsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  findLive(id: string, now: Date): Promise<Session | null> {
    return this.dataSource.getRepository(Session).findOneBy({ id, expiresAt: MoreThan(now) });
  }

  async save(manager: EntityManager, row: Omit<Session, 'createdAt' | 'user'>): Promise<void> {
    await manager.getRepository(Session).upsert(row, ['id']);
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

  async delete(manager: EntityManager, id: string): Promise<void> {
    await manager.getRepository(Session).delete({ id });
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
