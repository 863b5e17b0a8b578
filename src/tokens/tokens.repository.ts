import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In, IsNull, type Repository } from 'typeorm';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { toDate } from '../database/database-errors.js';
import { hotPathQuery } from '../database/hot-path-query.js';
import type { Ability } from '../common/auth/abilities.js';
import { PersonalAccessToken } from './personal-access-token.entity.js';

/** A token with the user it acts for and that user's current team, as one query loads them. */
export interface TokenWithOwner {
  tokenId: number;
  tokenName: string;
  createdAt: Date;
  abilities: Ability[];
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
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
  user_id: number;
  user_name: string;
  user_email: string;
  team_id: number | null;
  team_name: string | null;
  team_slug: string | null;
}

// One indexed lookup (unique token_hash) joined by primary keys: the whole cost of authentication.
const FIND_BY_HASH_SQL = `
  SELECT t.id AS token_id, t.name AS token_name, t.created_at, t.abilities, t.expires_at,
         t.revoked_at, t.last_used_at,
         u.id AS user_id, u.name AS user_name, u.email AS user_email,
         tm.id AS team_id, tm.name AS team_name, tm.slug AS team_slug
    FROM personal_access_tokens t
    JOIN users u ON u.id = t.user_id
    LEFT JOIN teams tm ON tm.id = u.current_team_id
   WHERE t.token_hash = ?`;

@Injectable()
export class TokensRepository {
  private readonly tokens: Repository<PersonalAccessToken>;
  private readonly findByHash: (hash: string) => Promise<TokenWithOwnerRow | undefined>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(CONFIG) config: Config,
  ) {
    this.tokens = dataSource.getRepository(PersonalAccessToken);
    this.findByHash = hotPathQuery(dataSource, FIND_BY_HASH_SQL, config.database.queryTimeoutMs);
  }

  async findWithOwnerByHash(hash: string): Promise<TokenWithOwner | null> {
    const row = await this.findByHash(hash);
    if (!row) return null;
    return {
      tokenId: Number(row.token_id),
      tokenName: row.token_name,
      createdAt: toDate(row.created_at)!,
      abilities: row.abilities.split(',') as Ability[],
      expiresAt: toDate(row.expires_at),
      revokedAt: toDate(row.revoked_at),
      lastUsedAt: toDate(row.last_used_at),
      user: { id: Number(row.user_id), name: row.user_name, email: row.user_email },
      team:
        row.team_id === null
          ? null
          : { id: Number(row.team_id), name: row.team_name!, slug: row.team_slug! },
    };
  }

  async insert(
    manager: EntityManager,
    token: Omit<PersonalAccessToken, 'id' | 'createdAt' | 'user'>,
  ): Promise<PersonalAccessToken> {
    const { identifiers } = await manager.getRepository(PersonalAccessToken).insert(token);
    return await manager
      .getRepository(PersonalAccessToken)
      .findOneByOrFail({ id: identifiers[0].id });
  }

  findForOwner(userId: number, id: number): Promise<PersonalAccessToken | null> {
    return this.tokens.findOneBy({ userId, id });
  }

  /** Tokens not revoked, newest first; expired ones are included so people can see why. */
  findUnrevokedForOwner(userId: number): Promise<PersonalAccessToken[]> {
    return this.tokens.find({
      where: { userId, revokedAt: IsNull() },
      order: { createdAt: 'DESC', id: 'DESC' },
    });
  }

  findUnrevokedForOwnerByName(userId: number, name: string): Promise<PersonalAccessToken[]> {
    return this.tokens.find({ where: { userId, name, revokedAt: IsNull() }, order: { id: 'ASC' } });
  }

  /** Marks the token revoked unless it already is; scoped by owner so no one revokes another's. */
  async revokeForOwner(
    manager: EntityManager,
    userId: number,
    id: number,
    at: Date,
  ): Promise<void> {
    await manager
      .getRepository(PersonalAccessToken)
      .update({ id, userId, revokedAt: IsNull() }, { revokedAt: at });
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
