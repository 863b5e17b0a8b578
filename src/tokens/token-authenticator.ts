import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { Clock } from '../clock/clock.js';
import { toDate } from '../database/plain-rows.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import type { Ability } from './abilities.js';
import type { TeamRole } from '../teams/team-member.entity.js';
import { LastUsedRecorder, TokenUsageRecorder } from './token-usage-recorder.js';
import { hashToken, isWellFormedToken } from './token-format.js';
import { teamRefusalOf } from './team-policy.js';
import type { TeamPolicy } from './tokens.repository.js';
import { AuthenticationError, REPLACED_VALUE_MESSAGE, TeamRefusalError } from './tokens.errors.js';

/**
 * A presented token, from its text to the principal an API request acts as: its shape and
 * checksum, the one query, its state, the team's verdict, and its use counted in memory.
 */

/**
 * A token with the user it acts for and the team it acts in (its pinned team, or its user's
 * current team) with that team's policy, as one query loads them.
 */
export interface TokenWithOwner {
  tokenId: number;
  tokenName: string;
  createdAt: Date;
  /** When its value was last replaced: its lifetime is counted from here, else from creation. */
  regeneratedAt: Date | null;
  abilities: Ability[];
  expiresAt: Date | null;
  /** The lifetime chosen for its current value, in whole days; null when it never expires. */
  lifetimeDays: number | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  /** The presented value is the one the token had before it was last regenerated. */
  previousValue: boolean;
  /** Until when that previous value is accepted (null when the token was never regenerated). */
  previousValidUntil: Date | null;
  /** `serviceAccount`: an account owned by the team its tokens are pinned to, not a person. */
  user: { id: number; name: string; email: string; twoFactor: boolean; serviceAccount: boolean };
  /** `current`: it follows its user's current team; `pinned`: it acts in one team only. */
  binding: 'current' | 'pinned';
  /** The team it acts in, while its user is a member of it (or the service account of it). */
  team: {
    id: number;
    name: string;
    slug: string;
    /** The user's role in it; null for the team's service account, which is no member. */
    role: TeamRole | null;
    policy: TeamPolicy;
  } | null;
  /** The id of the team it is pinned to, even when its user has left it (null once deleted). */
  pinnedTeamId: number | null;
}

interface TokenWithOwnerRow {
  token_id: number;
  token_name: string;
  created_at: Date | string;
  regenerated_at: Date | string | null;
  abilities: string;
  expires_at: Date | string | null;
  lifetime_days: number | null;
  revoked_at: Date | string | null;
  last_used_at: Date | string | null;
  token_hash: string;
  previous_valid_until: Date | string | null;
  user_id: number;
  user_name: string;
  user_email: string;
  user_disabled_at: Date | string | null;
  two_factor: number | null;
  service_account_team_id: number | null;
  pinned: number | null;
  pinned_team_id: number | null;
  team_id: number | null;
  team_name: string | null;
  team_slug: string | null;
  require_two_factor: number | boolean | null;
  token_max_lifetime_days: number | null;
  allowed_abilities: string | null;
  member_role: TeamRole | null;
}

/**
 * The whole cost of authentication: the token's id from one of its two unique hash indexes (the
 * current value, or the one a regeneration replaced), then everything else by primary keys: the
 * token, the user, the token's pin, the team it acts in (pinned, or the user's current one) with
 * its policy, the user's membership of that team and whether the user has two-factor sign-in.
 *
 * The id comes from a scalar subquery over the two indexes (`UNION ALL`; a hash is in at most
 * one of them, and `LIMIT 1` keeps the subquery scalar by its form) rather than
 * `token_hash = ? OR previous_token_hash = ?` in the join: both databases then read the index
 * entries alone and every table by its key (MariaDB: `const` for every table; SQLite: two
 * covering-index searches). The `OR` made MariaDB merge two index scans
 * (`index_merge`) and SQLite run a multi-index OR, which took two to five times as long for the
 * same row (docs/PERFORMANCE.md, "The authentication query"). docs/architecture.md shows the
 * plans; `test/token-lookup.e2e-spec.ts` checks them.
 */
export const FIND_BY_HASH_SQL = `
  SELECT t.id AS token_id, t.name AS token_name, t.created_at, t.regenerated_at, t.abilities,
         t.expires_at, t.lifetime_days, t.revoked_at, t.last_used_at, t.token_hash, t.previous_valid_until,
         u.id AS user_id, u.name AS user_name, u.email AS user_email, u.disabled_at AS user_disabled_at,
         tf.user_id AS two_factor, u.service_account_team_id,
         p.token_id AS pinned, p.team_id AS pinned_team_id,
         tm.id AS team_id, tm.name AS team_name, tm.slug AS team_slug, tm.require_two_factor,
         tm.token_max_lifetime_days, tm.allowed_abilities, m.role AS member_role
    FROM personal_access_tokens t
    JOIN users u ON u.id = t.user_id
    LEFT JOIN two_factor_credentials tf ON tf.user_id = u.id
    LEFT JOIN personal_access_token_pins p ON p.token_id = t.id
    LEFT JOIN teams tm
      ON tm.id = CASE WHEN p.token_id IS NULL THEN u.current_team_id ELSE p.team_id END
    LEFT JOIN team_members m ON m.team_id = tm.id AND m.user_id = u.id
   WHERE t.id = (SELECT id FROM personal_access_tokens WHERE token_hash = ?
                 UNION ALL
                 SELECT id FROM personal_access_tokens WHERE previous_token_hash = ?
                 LIMIT 1)`;

function toTokenWithOwner(row: TokenWithOwnerRow, hash: string): TokenWithOwner {
  const serviceAccountOf =
    row.service_account_team_id == null ? null : Number(row.service_account_team_id);
  // Only a team the user is in (a pinned team they left is no team at all), or the team that
  // owns the service account.
  const inTeam =
    row.team_id !== null && (row.member_role !== null || serviceAccountOf === Number(row.team_id));
  return {
    tokenId: Number(row.token_id),
    tokenName: row.token_name,
    createdAt: toDate(row.created_at)!,
    regeneratedAt: toDate(row.regenerated_at),
    abilities: row.abilities.split(',') as Ability[],
    expiresAt: toDate(row.expires_at),
    lifetimeDays: row.lifetime_days === null ? null : Number(row.lifetime_days),
    revokedAt: toDate(row.revoked_at),
    lastUsedAt: toDate(row.last_used_at),
    previousValue: row.token_hash !== hash,
    previousValidUntil: toDate(row.previous_valid_until),
    user: {
      id: Number(row.user_id),
      name: row.user_name,
      email: row.user_email,
      twoFactor: row.two_factor !== null,
      serviceAccount: serviceAccountOf !== null,
    },
    binding: row.pinned === null ? 'current' : 'pinned',
    team: !inTeam
      ? null
      : {
          id: Number(row.team_id),
          name: row.team_name!,
          slug: row.team_slug!,
          role: row.member_role,
          policy: {
            requireTwoFactor: Boolean(Number(row.require_two_factor)),
            tokenMaxLifetimeDays:
              row.token_max_lifetime_days === null ? null : Number(row.token_max_lifetime_days),
            allowedAbilities: row.allowed_abilities ? row.allowed_abilities.split(',') : null,
          },
        },
    pinnedTeamId: row.pinned_team_id === null ? null : Number(row.pinned_team_id),
  };
}

interface MysqlPool {
  execute(
    options: { sql: string; timeout: number },
    values: unknown[],
    callback: (error: Error | null, rows: unknown) => void,
  ): void;
}

interface SqliteConnection {
  prepare(sql: string): { get(...values: unknown[]): unknown };
}

/**
 * A one-row query for the request path, sent straight to the driver TypeORM already holds: a
 * prepared statement on MySQL/MariaDB (parsed once per connection) and on SQLite, without the
 * query runner, broadcaster and promise wrapper TypeORM puts around every query (together they
 * cost more Node CPU than the query itself; see docs/PERFORMANCE.md). The query still goes
 * through TypeORM's logger, and still has the query timeout.
 */
function hotPathQuery<Row>(
  dataSource: DataSource,
  sql: string,
  timeoutMs: number,
): (...values: unknown[]) => Promise<Row | undefined> {
  const log = (values: unknown[]) => dataSource.logger.logQuery(sql, values);
  if (dataSource.options.type === 'better-sqlite3') {
    let statement: ReturnType<SqliteConnection['prepare']> | undefined;
    return async (...values) => {
      log(values);
      statement ??= (
        dataSource.driver as unknown as { databaseConnection: SqliteConnection }
      ).databaseConnection.prepare(sql);
      return statement.get(...values) as Row | undefined;
    };
  }
  const options = { sql, timeout: timeoutMs };
  return (...values) =>
    new Promise((resolve, reject) => {
      log(values);
      (dataSource.driver as unknown as { pool: MysqlPool }).pool.execute(
        options,
        values,
        (error, rows) => (error ? reject(error) : resolve((rows as Row[])[0])),
      );
    });
}

/**
 * What an authenticated API request acts as: a token, its user and the team it acts in, with
 * the team's refusal when it refuses the token (answered by the routes that act in the team).
 */
export type TokenPrincipal = TokenWithOwner & { teamRefusal: TeamRefusalError | null };

/** Where an API request came from, for the token's usage. */
export interface ClientInfo {
  ip: string | undefined;
  userAgent: string | undefined;
}

/** Resolves presented tokens for the API's middleware, and counts what each did. */
@Injectable()
export class TokenAuthenticator {
  private readonly findByHash: (
    hash: string,
    previousHash: string,
  ) => Promise<TokenWithOwnerRow | undefined>;

  constructor(
    @InjectDataSource() dataSource: DataSource,
    @Inject(CONFIG) config: Config,
    private readonly clock: Clock,
    private readonly lastUsed: LastUsedRecorder,
    private readonly usage: TokenUsageRecorder,
  ) {
    this.findByHash = hotPathQuery(dataSource, FIND_BY_HASH_SQL, config.database.queryTimeoutMs);
  }

  /**
   * Resolves a presented token to its principal. Malformed tokens and bad checksums are refused
   * before any query; a well-formed one costs exactly one indexed query, every time, so a
   * revocation or a regeneration is seen by the very next request on every instance. The value
   * a regeneration replaced works until its grace period ends, then is refused as revoked.
   */
  async authenticate(presented: string): Promise<TokenPrincipal> {
    const principal = await this.resolve(presented);
    this.lastUsed.record(principal.tokenId, principal.lastUsedAt, this.clock.nowMs());
    return principal;
  }

  /**
   * A token presented to another service, checked as `authenticate` checks the API's (the
   * same query and the same rules) without refusing anything: null for one that is malformed,
   * unknown, revoked, replaced past its grace or expired. Nothing is counted here
   * (`recordCheck` counts a use).
   */
  async inspect(presented: string): Promise<TokenPrincipal | null> {
    try {
      return await this.resolve(presented);
    } catch (error) {
      if (error instanceof AuthenticationError) return null;
      throw error;
    }
  }

  /** The token, its state, and the team's verdict; refused with its code when not good. */
  private async resolve(presented: string): Promise<TokenPrincipal> {
    if (!isWellFormedToken(presented)) throw new AuthenticationError('invalid_token');
    const hash = hashToken(presented);
    const row = await this.findByHash(hash, hash);
    if (!row) throw new AuthenticationError('invalid_token');
    const principal = toTokenWithOwner(row, hash);
    const refused = { tokenId: principal.tokenId, userId: principal.user.id };
    if (principal.revokedAt) throw new AuthenticationError('token_revoked', undefined, refused);
    // An operator disabled its person (`user:disable`): refused until enabled again, not revoked.
    if (row.user_disabled_at !== null) {
      throw new AuthenticationError('account_disabled', undefined, refused);
    }
    const now = this.clock.nowMs();
    if (principal.previousValue && !(principal.previousValidUntil!.getTime() > now)) {
      throw new AuthenticationError('token_revoked', REPLACED_VALUE_MESSAGE, refused);
    }
    if (principal.expiresAt && principal.expiresAt.getTime() <= now) {
      throw new AuthenticationError('token_expired', undefined, refused);
    }
    const refusal = teamRefusalOf(principal);
    return Object.assign(principal, {
      // Built only for a refused token; the team is named to a token that may read it.
      teamRefusal:
        refusal === null
          ? null
          : new TeamRefusalError(
              refusal,
              principal.abilities.includes('team:read') ? principal.team?.name : undefined,
            ),
    });
  }

  /**
   * Counts a use of a token that another service checked (introspection): its last use and its
   * requests of the day, as an API request of its own would be; where it came from is that
   * service's business, not known here.
   */
  recordCheck(principal: TokenPrincipal): void {
    this.lastUsed.record(principal.tokenId, principal.lastUsedAt, this.clock.nowMs());
    this.recordUse(principal, { ip: undefined, userAgent: undefined });
  }

  /** Counts an authenticated request in the token's usage; written within a minute. */
  recordUse(principal: TokenPrincipal, client: ClientInfo): void {
    const at = this.clock.nowMs();
    this.usage.record({
      tokenId: principal.tokenId,
      userId: principal.user.id,
      at,
      ip: client.ip,
      userAgent: client.userAgent,
      previousValidUntil: principal.previousValue ? principal.previousValidUntil! : undefined,
    });
  }

  /**
   * Counts a known token's refusal for its security log: at most one event per token a minute,
   * written with the usage.
   */
  recordRefusal(error: AuthenticationError, client: ClientInfo): void {
    if (!error.refused) return;
    const at = this.clock.nowMs();
    this.usage.recordRefusal({ ...error.refused, reason: error.code, at, ...client });
  }
}
