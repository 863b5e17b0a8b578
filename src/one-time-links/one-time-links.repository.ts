import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull, LessThan, MoreThan, type EntityManager } from 'typeorm';
import { OneTimeLink, type LinkPurpose } from './one-time-link.entity.js';

@Injectable()
export class OneTimeLinksRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Stores a new token for the user, and deletes the unused ones it replaces; returns its id. */
  async insertReplacing(
    manager: EntityManager,
    row: Pick<
      OneTimeLink,
      'userId' | 'purpose' | 'tokenHash' | 'createdAt' | 'expiresAt' | 'email'
    >,
  ): Promise<number> {
    const repo = manager.getRepository(OneTimeLink);
    await repo.delete({ userId: row.userId, purpose: row.purpose, usedAt: IsNull() });
    const inserted = await repo.insert({ ...row, usedAt: null });
    return Number(inserted.identifiers[0].id);
  }

  /** The link `id` of the purpose, while it is neither used nor expired at `now`. */
  findUsableById(
    manager: EntityManager,
    id: number,
    purpose: LinkPurpose,
    now: Date,
  ): Promise<OneTimeLink | null> {
    return manager
      .getRepository(OneTimeLink)
      .findOneBy({ id, purpose, usedAt: IsNull(), expiresAt: MoreThan(now) });
  }

  /** Gives the unused link `id` a new token hash: false when it was used or deleted meanwhile. */
  async rehash(manager: EntityManager, id: number, tokenHash: string): Promise<boolean> {
    const result = await manager
      .getRepository(OneTimeLink)
      .update({ id, usedAt: IsNull() }, { tokenHash });
    return (result.affected ?? 0) > 0;
  }

  /**
   * Deletes the user's unused tokens of the purpose; their links then answer "not valid".
   * Returns how many went: of two deletions at once, one finds them.
   */
  async deleteUnused(
    manager: EntityManager,
    userId: number,
    purpose: LinkPurpose,
  ): Promise<number> {
    const result = await manager
      .getRepository(OneTimeLink)
      .delete({ userId, purpose, usedAt: IsNull() });
    return result.affected ?? 0;
  }

  /** The user's newest token of the purpose that is neither used nor expired at `now`. */
  findUsable(userId: number, purpose: LinkPurpose, now: Date): Promise<OneTimeLink | null> {
    return this.dataSource.getRepository(OneTimeLink).findOne({
      where: { userId, purpose, usedAt: IsNull(), expiresAt: MoreThan(now) },
      order: { createdAt: 'DESC', id: 'DESC' },
    });
  }

  findByHash(
    hash: string,
    purpose: LinkPurpose,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<OneTimeLink | null> {
    return manager.getRepository(OneTimeLink).findOneBy({ tokenHash: hash, purpose });
  }

  /** Marks the token used, unless it already was: true for the one caller that used it. */
  async markUsed(manager: EntityManager, id: number, at: Date): Promise<boolean> {
    const result = await manager
      .getRepository(OneTimeLink)
      .update({ id, usedAt: IsNull() }, { usedAt: at });
    return (result.affected ?? 0) > 0;
  }

  async deleteExpired(manager: EntityManager, before: Date): Promise<number> {
    const result = await manager.getRepository(OneTimeLink).delete({ expiresAt: LessThan(before) });
    return result.affected ?? 0;
  }
}
