import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In, IsNull, type Repository } from 'typeorm';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { toDate } from '../common/errors/database-errors.js';
import { hotPathQuery } from '../database/hot-path-query.js';
import type { Ability } from './abilities.js';
import { PersonalAccessToken } from './personal-access-token.entity.js';

/** What a new token's row holds; the rest takes the columns' defaults. */
export type NewToken = Pick<
  PersonalAccessToken,
  'userId' | 'name' | 'tokenHash' | 'lastFour' | 'abilities' | 'expiresAt'
>;

/** A regenerated token's new value and what changes with it. */
export interface NewValue {
  tokenHash: string;
  lastFour: string;
  expiresAt: Date | null;
  previousValidUntil: Date;
  regeneratedAt: Date;
}

/** A token whose owner is due to be told of its expiry. */
export interface ExpiryDue {
  id: number;
  userId: number;
  name: string;
  expiresAt: Date;
  /** When its current lifetime began: created, or last regenerated. */
  startedAt: Date;
}

/** A token with the user it acts for and that user's current team, as one query loads them. */
export interface TokenWithOwner {
  tokenId: number;
  tokenName: string;
  createdAt: Date;
  abilities: Ability[];
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  /** The presented value is the one the token had before it was last regenerated. */
  previousValue: boolean;
  /** Until when that previous value is accepted (null when the token was never regenerated). */
  previousValidUntil: Date | null;
  user: { id: number; name: string; email: string };
  team: { id: number; name: string; slug: string } | null;
}

interface TokenWithOwnerRow {
  token_id: number;
  token_name: string;
  created_at: Date | string;
  abilities: string;
  expires_at: Date | string | null;
  revoked_at: Date | string | null;
  last_used_at: Date | string | null;
  token_hash: string;
  previous_valid_until: Date | string | null;
  user_id: number;
  user_name: string;
  user_email: string;
  team_id: number | null;
  team_name: string | null;
  team_slug: string | null;
}

/**
 * The whole cost of authentication: one lookup in the two unique hash indexes (the current
 * value, or the one a regeneration replaced; MariaDB and MySQL merge the two index lookups, SQLite
 * runs a multi-index OR) joined by primary keys. docs/architecture.md shows the plans.
 */
const FIND_BY_HASH_SQL = `
  SELECT t.id AS token_id, t.name AS token_name, t.created_at, t.abilities, t.expires_at,
         t.revoked_at, t.last_used_at, t.token_hash, t.previous_valid_until,
         u.id AS user_id, u.name AS user_name, u.email AS user_email,
         tm.id AS team_id, tm.name AS team_name, tm.slug AS team_slug
    FROM personal_access_tokens t
    JOIN users u ON u.id = t.user_id
    LEFT JOIN teams tm ON tm.id = u.current_team_id
   WHERE t.token_hash = ? OR t.previous_token_hash = ?`;

@Injectable()
export class TokensRepository {
  private readonly tokens: Repository<PersonalAccessToken>;
  private readonly findByHash: (
    hash: string,
    previousHash: string,
  ) => Promise<TokenWithOwnerRow | undefined>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(CONFIG) config: Config,
  ) {
    this.tokens = dataSource.getRepository(PersonalAccessToken);
    this.findByHash = hotPathQuery(dataSource, FIND_BY_HASH_SQL, config.database.queryTimeoutMs);
  }

  async findWithOwnerByHash(hash: string): Promise<TokenWithOwner | null> {
    const row = await this.findByHash(hash, hash);
    if (!row) return null;
    return {
      tokenId: Number(row.token_id),
      tokenName: row.token_name,
      createdAt: toDate(row.created_at)!,
      abilities: row.abilities.split(',') as Ability[],
      expiresAt: toDate(row.expires_at),
      revokedAt: toDate(row.revoked_at),
      lastUsedAt: toDate(row.last_used_at),
      previousValue: row.token_hash !== hash,
      previousValidUntil: toDate(row.previous_valid_until),
      user: { id: Number(row.user_id), name: row.user_name, email: row.user_email },
      team:
        row.team_id === null
          ? null
          : { id: Number(row.team_id), name: row.team_name!, slug: row.team_slug! },
    };
  }

  async insert(manager: EntityManager, token: NewToken): Promise<PersonalAccessToken> {
    const { identifiers } = await manager.getRepository(PersonalAccessToken).insert(token);
    return await manager
      .getRepository(PersonalAccessToken)
      .findOneByOrFail({ id: identifiers[0].id });
  }

  /** One of the user's tokens, read through `manager` when given (inside a transaction). */
  findForOwner(
    userId: number,
    id: number,
    manager?: EntityManager,
  ): Promise<PersonalAccessToken | null> {
    return (manager?.getRepository(PersonalAccessToken) ?? this.tokens).findOneBy({ userId, id });
  }

  /** Every token the user has (revoked and expired ones until pruned), newest first. */
  findAllForOwner(userId: number): Promise<PersonalAccessToken[]> {
    return this.tokens.find({ where: { userId }, order: { createdAt: 'DESC', id: 'DESC' } });
  }

  findUnrevokedForOwnerByName(userId: number, name: string): Promise<PersonalAccessToken[]> {
    return this.tokens.find({ where: { userId, name, revokedAt: IsNull() }, order: { id: 'ASC' } });
  }

  /**
   * Gives the token a new value, keeping the one it replaces as its previous value, only if the
   * token still has `replacedHash` and is not revoked: of two regenerations at once, one finds the
   * value already replaced and changes nothing. Resets what was counted of the value before.
   */
  async replaceValue(
    manager: EntityManager,
    userId: number,
    id: number,
    replacedHash: string,
    next: NewValue,
  ): Promise<boolean> {
    const result = await manager.getRepository(PersonalAccessToken).update(
      { id, userId, tokenHash: replacedHash, revokedAt: IsNull() },
      {
        ...next,
        previousTokenHash: replacedHash,
        previousRequests: 0,
        previousLastUsedAt: null,
        // A new lifetime: its reminders are still to come.
        expiryNotices: 0,
      },
    );
    return result.affected === 1;
  }

  /** Renames the token or changes its abilities, unless it is revoked; true when it changed. */
  async updateDetails(
    manager: EntityManager,
    userId: number,
    id: number,
    details: Pick<PersonalAccessToken, 'name' | 'abilities'>,
  ): Promise<boolean> {
    const result = await manager
      .getRepository(PersonalAccessToken)
      .update({ id, userId, revokedAt: IsNull() }, details);
    return result.affected === 1;
  }

  /**
   * Marks the token revoked unless it already is; scoped by owner so no one revokes another's.
   * Whether this call revoked it (of several at once, one does).
   */
  async revokeForOwner(
    manager: EntityManager,
    userId: number,
    id: number,
    at: Date,
  ): Promise<boolean> {
    const result = await manager
      .getRepository(PersonalAccessToken)
      .update({ id, userId, revokedAt: IsNull() }, { revokedAt: at });
    return result.affected === 1;
  }

  /** Writes last_used_at unless another instance wrote a fresher one in the meantime. */
  async touchLastUsed(
    manager: EntityManager,
    id: number,
    at: Date,
    staleBefore: Date,
  ): Promise<void> {
    await manager
      .getRepository(PersonalAccessToken)
      .createQueryBuilder()
      .update()
      .set({ lastUsedAt: at })
      .where('id = :id', { id })
      .andWhere('(last_used_at IS NULL OR last_used_at < :staleBefore)', { staleBefore })
      .execute();
  }

  findById(id: number, manager?: EntityManager): Promise<PersonalAccessToken | null> {
    return (manager?.getRepository(PersonalAccessToken) ?? this.tokens).findOneBy({ id });
  }

  /**
   * Up to `limit` unrevoked tokens expiring by `until` whose owner has not been told up to
   * step `notice` (see TokenExpiryReminders): a range of the (expiry_notices, expires_at) index.
   */
  async findExpiryDue(notice: number, until: Date, limit: number): Promise<ExpiryDue[]> {
    const steps = Array.from({ length: notice }, (_, i) => i);
    const rows = await this.tokens
      .createQueryBuilder('t')
      .select(['t.id', 't.userId', 't.name', 't.expiresAt', 't.createdAt', 't.regeneratedAt'])
      .where('t.expiry_notices IN (:...steps)', { steps })
      .andWhere('t.expires_at <= :until', { until })
      .andWhere('t.revoked_at IS NULL')
      .orderBy('t.id')
      .limit(limit)
      .getMany();
    return rows.map((t) => ({
      id: t.id,
      userId: t.userId,
      name: t.name,
      expiresAt: t.expiresAt!,
      startedAt: t.regeneratedAt ?? t.createdAt,
    }));
  }

  /**
   * Moves the token to step `notice` if it is not there yet and still expires by `until`,
   * unrevoked; true only for the one caller whose UPDATE changed the row.
   */
  async claimExpiryNotice(
    manager: EntityManager,
    id: number,
    notice: number,
    until: Date,
  ): Promise<boolean> {
    const result = await manager
      .getRepository(PersonalAccessToken)
      .createQueryBuilder()
      .update()
      .set({ expiryNotices: notice })
      .where('id = :id', { id })
      .andWhere('expiry_notices < :notice', { notice })
      .andWhere('expires_at <= :until', { until })
      .andWhere('revoked_at IS NULL')
      .execute();
    return result.affected === 1;
  }

  /** Up to `limit` ids of tokens revoked, or expired, before `before`. */
  async findDeadIds(before: Date, limit: number): Promise<number[]> {
    const rows = await this.tokens
      .createQueryBuilder('t')
      .select('t.id', 'id')
      .where('t.revoked_at < :before', { before })
      .orWhere('t.expires_at < :before', { before })
      .orderBy('t.id')
      .limit(limit)
      .getRawMany<{ id: number | string }>();
    return rows.map((r) => Number(r.id));
  }

  async deleteByIds(manager: EntityManager, ids: number[]): Promise<number> {
    const result = await manager.getRepository(PersonalAccessToken).delete({ id: In(ids) });
    return result.affected ?? ids.length;
  }
}
