import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, type Repository } from 'typeorm';
import { toStoredTime } from '../database/plain-rows.js';
import { TokenAddress } from './token-address.entity.js';
import { TokenDailyUsage } from './token-daily-usage.entity.js';

export interface DailyRequests {
  tokenId: number;
  /** UTC day, YYYY-MM-DD. */
  day: string;
  requests: number;
}

export interface AddressUse {
  tokenId: number;
  ip: string;
  lastUsedAt: Date;
  userAgent: string | null;
}

export interface PreviousValueUses {
  tokenId: number;
  /** Which regeneration's previous value was used: its grace period's end. */
  validUntil: Date;
  requests: number;
  lastUsedAt: Date;
}

/** Rows per statement: a flush of many tokens is written in a few statements of bounded size. */
const CHUNK = 500;

const chunks = <T>(items: T[]): T[][] =>
  Array.from({ length: Math.ceil(items.length / CHUNK) }, (_, i) =>
    items.slice(i * CHUNK, (i + 1) * CHUNK),
  );

const marks = (count: number, row: string) => Array.from({ length: count }, () => row).join(', ');

/**
 * What tokens were used for: requests per UTC day and the addresses they came from. The writes
 * add to what is there, in one statement per kind of row whatever the number of tokens:
 * `INSERT … ON DUPLICATE KEY UPDATE` on MySQL/MariaDB, `INSERT … ON CONFLICT … DO UPDATE` on
 * SQLite. Reads are scoped by the token's owner.
 */
@Injectable()
export class TokenUsageRepository {
  private readonly days: Repository<TokenDailyUsage>;
  private readonly addresses: Repository<TokenAddress>;
  private readonly sqlite: boolean;

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.days = dataSource.getRepository(TokenDailyUsage);
    this.addresses = dataSource.getRepository(TokenAddress);
    this.sqlite = dataSource.options.type === 'better-sqlite3';
  }

  async addDailyRequests(manager: EntityManager, rows: DailyRequests[]): Promise<void> {
    const upsert = this.sqlite
      ? 'ON CONFLICT (token_id, day) DO UPDATE SET requests = requests + excluded.requests'
      : // VALUES() is MariaDB's only spelling; MySQL 8 still takes it (and warns of a row alias).
        'ON DUPLICATE KEY UPDATE requests = requests + VALUES(requests)';
    for (const chunk of chunks(rows)) {
      await manager.query(
        `INSERT INTO personal_access_token_daily_usage (token_id, day, requests)
         VALUES ${marks(chunk.length, '(?, ?, ?)')} ${upsert}`,
        chunk.flatMap((r) => [r.tokenId, r.day, r.requests]),
      );
    }
  }

  /**
   * Records each address's latest use; an older use (from another instance's later flush) leaves
   * a newer one in place. On MySQL later assignments see earlier ones, so the user agent is
   * compared before the time moves; SQLite reads the old row in every assignment.
   */
  async saveAddresses(manager: EntityManager, rows: AddressUse[]): Promise<void> {
    const upsert = this.sqlite
      ? `ON CONFLICT (token_id, ip) DO UPDATE SET
           user_agent = CASE WHEN excluded.last_used_at >= last_used_at
                             THEN excluded.user_agent ELSE user_agent END,
           last_used_at = MAX(last_used_at, excluded.last_used_at)`
      : `ON DUPLICATE KEY UPDATE
           user_agent = IF(VALUES(last_used_at) >= last_used_at, VALUES(user_agent), user_agent),
           last_used_at = GREATEST(last_used_at, VALUES(last_used_at))`;
    for (const chunk of chunks(rows)) {
      await manager.query(
        `INSERT INTO personal_access_token_addresses (token_id, ip, last_used_at, user_agent)
         VALUES ${marks(chunk.length, '(?, ?, ?, ?)')} ${upsert}`,
        chunk.flatMap((r) => [r.tokenId, r.ip, this.time(r.lastUsedAt), r.userAgent]),
      );
    }
  }

  /**
   * Records the address for the token unless it is recorded already: true when this call added
   * it. Two flushes at once (two instances) both reading it as new agree here: the second waits
   * on the first's row and adds nothing.
   */
  async addAddressIfNew(manager: EntityManager, row: AddressUse): Promise<boolean> {
    const insert = this.sqlite
      ? `INSERT INTO personal_access_token_addresses (token_id, ip, last_used_at, user_agent)
         VALUES (?, ?, ?, ?) ON CONFLICT (token_id, ip) DO NOTHING`
      : `INSERT IGNORE INTO personal_access_token_addresses (token_id, ip, last_used_at, user_agent)
         VALUES (?, ?, ?, ?)`;
    const result = await manager.queryRunner!.query(
      insert,
      [row.tokenId, row.ip, this.time(row.lastUsedAt), row.userAgent],
      true,
    );
    return (result.affected ?? 0) > 0;
  }

  /** The tokens' recorded addresses, as `"<token id> <ip>"`. */
  async findAddressKeys(manager: EntityManager, tokenIds: number[]): Promise<Set<string>> {
    const keys = new Set<string>();
    for (const ids of chunks(tokenIds)) {
      const rows: { token_id: number | string; ip: string }[] = await manager.query(
        `SELECT token_id, ip FROM personal_access_token_addresses
          WHERE token_id IN (${marks(ids.length, '?')})`,
        ids,
      );
      for (const r of rows) keys.add(`${Number(r.token_id)} ${r.ip}`);
    }
    return keys;
  }

  /** Which of `tokenIds` are still stored (a token is deleted with its account or team). */
  async findExisting(tokenIds: number[]): Promise<Set<number>> {
    const existing = new Set<number>();
    for (const ids of chunks(tokenIds)) {
      const rows: { id: number | string }[] = await this.days.manager.query(
        `SELECT id FROM personal_access_tokens WHERE id IN (${marks(ids.length, '?')})`,
        ids,
      );
      for (const r of rows) existing.add(Number(r.id));
    }
    return existing;
  }

  /**
   * Each token's name and, for a service account's token, its team: what the event of a use
   * from a new address says and whose endpoints hear it.
   */
  async findTokenFacts(
    manager: EntityManager,
    tokenIds: number[],
  ): Promise<Map<number, { name: string; teamId: number | null }>> {
    const facts = new Map<number, { name: string; teamId: number | null }>();
    for (const ids of chunks(tokenIds)) {
      const rows: { id: number | string; name: string; team_id: number | string | null }[] =
        await manager.query(
          `SELECT t.id, t.name, u.service_account_team_id AS team_id
             FROM personal_access_tokens t JOIN users u ON u.id = t.user_id
            WHERE t.id IN (${marks(ids.length, '?')})`,
          ids,
        );
      for (const r of rows) {
        facts.set(Number(r.id), {
          name: r.name,
          teamId: r.team_id === null ? null : Number(r.team_id),
        });
      }
    }
    return facts;
  }

  /** Keeps each token's `keep` most recently used addresses and deletes the others. */
  async trimAddresses(manager: EntityManager, tokenIds: number[], keep: number): Promise<void> {
    for (const ids of chunks(tokenIds)) {
      const list = marks(ids.length, '?');
      await manager.query(
        `DELETE FROM personal_access_token_addresses
          WHERE token_id IN (${list})
            AND (token_id, ip) IN (
              SELECT token_id, ip FROM (
                SELECT token_id, ip, ROW_NUMBER() OVER (
                         PARTITION BY token_id ORDER BY last_used_at DESC, ip) AS n
                  FROM personal_access_token_addresses
                 WHERE token_id IN (${list})
              ) ranked
              WHERE n > ?)`,
        [...ids, ...ids, keep],
      );
    }
  }

  /** Deletes the tokens' counts of days before `before` (YYYY-MM-DD). */
  async trimDays(manager: EntityManager, tokenIds: number[], before: string): Promise<void> {
    for (const ids of chunks(tokenIds)) {
      await manager.query(
        `DELETE FROM personal_access_token_daily_usage
          WHERE token_id IN (${marks(ids.length, '?')}) AND day < ?`,
        [...ids, before],
      );
    }
  }

  /**
   * Counts uses of a regenerated token's previous value, only while the token still has that
   * previous value (the same grace period): a value replaced twice is not counted for the next.
   */
  async addPreviousValueUses(manager: EntityManager, uses: PreviousValueUses): Promise<void> {
    await manager.query(
      `UPDATE personal_access_tokens
          SET previous_requests = previous_requests + ?,
              previous_last_used_at = ?
        WHERE id = ? AND previous_valid_until = ?`,
      [uses.requests, this.time(uses.lastUsedAt), uses.tokenId, this.time(uses.validUntil)],
    );
  }

  /** The token's requests per day from `since` (YYYY-MM-DD) on, oldest first. */
  findDailyForOwner(userId: number, tokenId: number, since: string): Promise<TokenDailyUsage[]> {
    return this.days
      .createQueryBuilder('d')
      .innerJoin('d.token', 't')
      .where('t.id = :tokenId AND t.userId = :userId', { tokenId, userId })
      .andWhere('d.day >= :since', { since })
      .orderBy('d.day', 'ASC')
      .getMany();
  }

  /** The token's `limit` most recently used addresses, latest first. */
  findAddressesForOwner(userId: number, tokenId: number, limit: number): Promise<TokenAddress[]> {
    return this.addresses
      .createQueryBuilder('a')
      .innerJoin('a.token', 't')
      .where('t.id = :tokenId AND t.userId = :userId', { tokenId, userId })
      .orderBy('a.lastUsedAt', 'DESC')
      .addOrderBy('a.ip', 'ASC')
      .limit(limit)
      .getMany();
  }

  private time(value: Date): Date | string {
    return toStoredTime(value, this.sqlite);
  }
}
