import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In, IsNull, type Repository } from 'typeorm';
import { User } from '../users/user.entity.js';
import type { PersonSnapshot, TeamRecord } from '../common/actor.js';
import { entityOf, selectColumns, toDate, toStoredTime } from '../database/plain-rows.js';
import type { Ability } from './abilities.js';
import type { KeysetPage } from '../common/keyset-page.js';
import { PersonalAccessToken } from './personal-access-token.entity.js';
import { TokenPin } from './token-pin.entity.js';
import { Team } from '../teams/team.entity.js';
import { TeamMember, type TeamRole } from '../teams/team-member.entity.js';
import { TwoFactorCredential } from '../two-factor/two-factor-credential.entity.js';
import { TokenAddress } from './token-address.entity.js';

/** What a new token's row holds; the rest takes the columns' defaults. */
export type NewToken = Pick<
  PersonalAccessToken,
  | 'userId'
  | 'name'
  | 'tokenHash'
  | 'lastFour'
  | 'abilities'
  | 'expiresAt'
  | 'lifetimeDays'
  | 'createdAt'
> &
  Partial<Pick<PersonalAccessToken, 'createdById'>>;

/** What a new token's row holds besides what it is given: the table's defaults. */
const NEW_TOKEN_ROW = {
  createdById: null,
  previousTokenHash: null,
  previousValidUntil: null,
  previousRequests: 0,
  previousLastUsedAt: null,
  expiryNotices: 0,
  lastUsedAt: null,
  revokedAt: null,
  regeneratedAt: null,
} satisfies Partial<PersonalAccessToken>;

/** A regenerated token's new value and what changes with it. */
export interface NewValue {
  tokenHash: string;
  lastFour: string;
  expiresAt: Date | null;
  lifetimeDays: number | null;
  previousValidUntil: Date;
  regeneratedAt: Date;
}

/** A token's use, for its last_used_at. */
export interface LastUse {
  tokenId: number;
  at: Date;
}

/** A token whose owner is due to be told of its expiry. */
export interface ExpiryDue {
  id: number;
  userId: number;
  name: string;
  expiresAt: Date;
  /** When its current lifetime began: created, or last regenerated. */
  startedAt: Date;
  /** The lifetime chosen for its current value, in whole days (null for rows that lack it). */
  lifetimeDays: number | null;
}

/** The policy of a team, as it governs the tokens acting in it. */
export interface TeamPolicy {
  requireTwoFactor: boolean;
  tokenMaxLifetimeDays: number | null;
  /** The abilities tokens acting in the team may use; null for all the catalog offers. */
  allowedAbilities: string[] | null;
}

/** A team as it governs tokens: its name and policy. */
export interface GoverningTeam {
  id: number;
  name: string;
  policy: TeamPolicy;
}

/** A token's pin: the team it acts in whatever the person's current team (null: none now). */
export interface TokenPinRow {
  tokenId: number | string;
  teamId: number | string | null;
}

/** What decides which team each of a person's tokens acts in, and whether it refuses them. */
export interface Governance {
  currentTeam: GoverningTeam | null;
  /** The pinned tokens: the team each is pinned to while the person is in it, else null. */
  pins: Map<number, GoverningTeam | null>;
  twoFactor: boolean;
}

/** A token that acts in a team now, as its inventory lists it: never its value or hash. */
export interface TeamToken {
  id: number;
  name: string;
  lastFour: string;
  abilities: Ability[];
  createdAt: Date;
  regeneratedAt: Date | null;
  expiresAt: Date | null;
  /** The lifetime chosen for its current value, in whole days; null when it never expires. */
  lifetimeDays: number | null;
  /**
   * When and where it was last used: only for a token pinned to the team, every use of which was
   * in the team. A token that follows its person may have been used in another team (null).
   */
  lastUsedAt: Date | null;
  lastAddress: string | null;
  pinned: boolean;
  /**
   * Whose token it is: a member (with their role), or the team's service account (no role: it
   * is never a member).
   */
  person: {
    id: number;
    name: string;
    email: string;
    role: TeamRole | null;
    twoFactor: boolean;
    serviceAccount: boolean;
    /** An operator disabled the account: its tokens are refused everywhere until enabled. */
    disabled: boolean;
  };
  /** Who made it, when not its own account (a service account's): null once they are deleted. */
  createdBy: { id: number; name: string } | null;
}

/** One of a team's owners and admins, whom its service accounts' tokens concern. */
export interface TeamManager {
  id: number;
  email: string;
}

/** The team a service account belongs to, and the account's name. */
export interface ServiceAccountOwner {
  accountId: number;
  accountName: string;
  teamId: number;
  teamName: string;
}

/** A member revoking a token of their team: their role, and the roles whose tokens they may. */
export interface TeamRevoker {
  userId: number;
  role: TeamRole;
  /** Besides their own tokens. */
  manages: TeamRole[];
}

/**
 * A token (`personal_access_tokens`, unaliased, as in an UPDATE) acts in team `:teamId` now:
 * pinned to it, or following its person whose current team it is. Membership is checked apart.
 */
const ACTS_IN_TEAM_NOW = `(
    EXISTS (SELECT 1 FROM personal_access_token_pins p
             WHERE p.token_id = personal_access_tokens.id AND p.team_id = :teamId)
    OR (NOT EXISTS (SELECT 1 FROM personal_access_token_pins p
                     WHERE p.token_id = personal_access_tokens.id)
        AND EXISTS (SELECT 1 FROM users u
                     WHERE u.id = personal_access_tokens.user_id AND u.current_team_id = :teamId)))`;

const policyOf = (
  team: Pick<Team, 'requireTwoFactor' | 'tokenMaxLifetimeDays' | 'allowedAbilities'>,
): TeamPolicy => ({
  requireTwoFactor: Boolean(team.requireTwoFactor),
  tokenMaxLifetimeDays: team.tokenMaxLifetimeDays,
  allowedAbilities: team.allowedAbilities,
});

/** A team as it governs the tokens acting in it. */
export const governing = (team: TeamRecord): GoverningTeam => ({
  id: team.id,
  name: team.name,
  policy: policyOf(team),
});

@Injectable()
export class TokensRepository {
  private readonly tokens: Repository<PersonalAccessToken>;
  private ownedSql?: string;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.tokens = dataSource.getRepository(PersonalAccessToken);
  }

  /** A team the person is a member of, with its policy; null for any other id. */
  async findTeamOfMember(
    userId: number,
    teamId: number,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<GoverningTeam | null> {
    const member = await manager
      .getRepository(TeamMember)
      .findOne({ where: { userId, teamId }, relations: { team: true } });
    return member?.team ? governing(member.team) : null;
  }

  /** The person's current team with its policy, while they are a member of it; else null. */
  async findCurrentTeamOf(userId: number, known?: PersonSnapshot): Promise<GoverningTeam | null> {
    if (known) {
      const current = known.memberships.find((m) => m.team.id === known.currentTeamId);
      return current ? governing(current.team) : null;
    }
    const user = await this.dataSource.manager
      .getRepository(User)
      .findOne({ select: { id: true, currentTeamId: true }, where: { id: userId } });
    return user?.currentTeamId ? this.findTeamOfMember(userId, user.currentTeamId) : null;
  }

  /** The person's teams with their policies, by name: where a new token may be pinned. */
  async findTeamsOfMember(userId: number, known?: PersonSnapshot): Promise<GoverningTeam[]> {
    if (known) return known.memberships.map((m) => governing(m.team));
    const rows = await this.dataSource.manager.getRepository(TeamMember).find({
      where: { userId },
      relations: { team: true },
      order: { team: { name: 'ASC', id: 'ASC' } },
    });
    return rows.map((row) => governing(row.team!));
  }

  /** Pins a new token to a team, in the transaction that creates it. */
  async insertPin(manager: EntityManager, tokenId: number, teamId: number): Promise<void> {
    await manager.getRepository(TokenPin).insert({ tokenId, teamId });
  }

  /**
   * The pin of one of the person's tokens: null when it is not pinned, else the team it is
   * pinned to while the person is a member of it (null inside when not).
   */
  async findPin(userId: number, tokenId: number): Promise<{ team: GoverningTeam | null } | null> {
    const pin = await this.dataSource.manager
      .getRepository(TokenPin)
      .findOneBy({ tokenId, token: { userId } });
    if (!pin) return null;
    return { team: pin.teamId === null ? null : await this.findTeamOfMember(userId, pin.teamId) };
  }

  /**
   * Which team each of the person's tokens acts in and what that team requires. `pinned`: the
   * tokens' pins when the caller read them already (`findAllForOwnerWithPins`).
   */
  async findGovernance(
    userId: number,
    known?: PersonSnapshot,
    pinned?: readonly TokenPinRow[],
  ): Promise<Governance> {
    const m = this.dataSource.manager;
    const [user, pins, memberships, twoFactor] = await Promise.all([
      known ??
        m.getRepository(User).findOne({
          select: { id: true, currentTeamId: true, serviceAccountTeamId: true },
          where: { id: userId },
        }),
      pinned ??
        m
          .getRepository(TokenPin)
          .createQueryBuilder('p')
          .innerJoin(PersonalAccessToken, 't', 't.id = p.token_id')
          .select('p.token_id', 'tokenId')
          .addSelect('p.team_id', 'teamId')
          .where('t.user_id = :userId', { userId })
          .getRawMany<TokenPinRow>(),
      this.findTeamsOfMember(userId, known),
      known?.twoFactor ?? m.getRepository(TwoFactorCredential).exists({ where: { userId } }),
    ]);
    const teams = new Map(memberships.map((t) => [t.id, t]));
    // A service account is no member of its team, yet its tokens act there (pinned to it).
    const ownedBy = user && 'serviceAccountTeamId' in user ? user.serviceAccountTeamId : null;
    if (ownedBy !== null) {
      const team = await m.getRepository(Team).findOneBy({ id: ownedBy });
      if (team) teams.set(team.id, governing(team));
    }
    return {
      currentTeam: (user?.currentTeamId && teams.get(user.currentTeamId)) || null,
      pins: new Map(
        pins.map((p) => [
          Number(p.tokenId),
          p.teamId === null ? null : (teams.get(Number(p.teamId)) ?? null),
        ]),
      ),
      twoFactor,
    };
  }

  /**
   * The active tokens that act in the team now: those pinned to it, and those that follow a
   * person whose current team it is, while their person is a member. A member's token that
   * follows them into another team acts only there, and is none of this team's business.
   */
  async findActingIn(
    teamId: number,
    now: Date,
    {
      tokenId,
      page,
      ownerId,
      manager,
    }: { tokenId?: number; page?: KeysetPage; ownerId?: number; manager?: EntityManager } = {},
  ): Promise<TeamToken[]> {
    const query = (manager?.getRepository(PersonalAccessToken) ?? this.tokens)
      .createQueryBuilder('t')
      .leftJoin(TeamMember, 'm', 'm.user_id = t.user_id AND m.team_id = :teamId', { teamId })
      .innerJoin(User, 'u', 'u.id = t.user_id')
      .leftJoin(TokenPin, 'p', 'p.token_id = t.id')
      .leftJoin(TwoFactorCredential, 'tf', 'tf.user_id = t.user_id')
      .leftJoin(User, 'c', 'c.id = t.created_by_id')
      .select([
        't.id AS id',
        't.name AS name',
        't.last_four AS last_four',
        't.abilities AS abilities',
        't.created_at AS created_at',
        't.regenerated_at AS regenerated_at',
        't.expires_at AS expires_at',
        't.lifetime_days AS lifetime_days',
        't.last_used_at AS last_used_at',
        'p.token_id AS pinned',
        'u.id AS user_id',
        'u.name AS user_name',
        'u.email AS user_email',
        'm.role AS role',
        'tf.user_id AS two_factor',
        'u.service_account_team_id AS service_account_team_id',
        'u.disabled_at AS disabled_at',
        'c.id AS created_by_id',
        'c.name AS created_by_name',
      ])
      .addSelect(
        (sub) =>
          sub
            .select('a.ip')
            .from(TokenAddress, 'a')
            // A following token's addresses may be another team's business: not read.
            .where('a.token_id = t.id AND p.token_id IS NOT NULL')
            .orderBy('a.last_used_at', 'DESC')
            .limit(1),
        'last_address',
      )
      .where('t.revoked_at IS NULL')
      .andWhere('(t.expires_at IS NULL OR t.expires_at > :now)', { now })
      // A member's, or the team's own service account's.
      .andWhere('(m.user_id IS NOT NULL OR u.service_account_team_id = :teamId)', { teamId })
      .andWhere('(p.team_id = :teamId OR (p.token_id IS NULL AND u.current_team_id = :teamId))', {
        teamId,
      })
      .orderBy('u.name', 'ASC')
      .addOrderBy('t.created_at', 'DESC')
      .addOrderBy('t.id', 'DESC');
    if (tokenId !== undefined) query.andWhere('t.id = :tokenId', { tokenId });
    if (ownerId !== undefined) query.andWhere('t.user_id = :ownerId', { ownerId });
    // A page of the inventory: by token id, one row beyond the limit.
    if (page) {
      query.orderBy('t.id', 'ASC').limit(page.limit + 1);
      if (page.after !== undefined) query.andWhere('t.id > :after', { after: page.after });
    }
    const rows = await query.getRawMany<Record<string, unknown>>();
    return rows.map((r) => ({
      id: Number(r.id),
      name: String(r.name),
      lastFour: String(r.last_four),
      abilities: String(r.abilities).split(',') as Ability[],
      createdAt: toDate(r.created_at as string)!,
      regeneratedAt: toDate(r.regenerated_at as string | null),
      expiresAt: toDate(r.expires_at as string | null),
      lifetimeDays: r.lifetime_days === null ? null : Number(r.lifetime_days),
      lastUsedAt: r.pinned === null ? null : toDate(r.last_used_at as string | null),
      lastAddress: (r.last_address as string | null) ?? null,
      pinned: r.pinned !== null,
      person: {
        id: Number(r.user_id),
        name: String(r.user_name),
        email: String(r.user_email),
        role: (r.role as TeamRole | null) ?? null,
        twoFactor: r.two_factor !== null,
        serviceAccount: r.service_account_team_id !== null,
        disabled: r.disabled_at !== null,
      },
      createdBy:
        r.created_by_id === null
          ? null
          : { id: Number(r.created_by_id), name: String(r.created_by_name) },
    }));
  }

  /**
   * Revokes the token if, at this moment, it is active, acts in the team (see findActingIn), its
   * person is a member whose tokens the revoker may revoke (their own, or a role they manage),
   * and the revoker still has the role they had: the check and the write are one statement, so
   * a switch of team, a role change or another revocation meanwhile leaves it untouched. Whether
   * this call revoked it.
   */
  async revokeActingIn(
    manager: EntityManager,
    teamId: number,
    tokenId: number,
    revoker: TeamRevoker,
    at: Date,
  ): Promise<boolean> {
    const manages = revoker.manages.length ? 'OR m.role IN (:...manages)' : '';
    const result = await manager
      .getRepository(PersonalAccessToken)
      .createQueryBuilder()
      .update()
      .set({ revokedAt: at })
      .where('id = :tokenId', { tokenId })
      .andWhere('revoked_at IS NULL')
      .andWhere('(expires_at IS NULL OR expires_at > :at)', { at })
      .andWhere(ACTS_IN_TEAM_NOW, { teamId })
      .andWhere(
        `EXISTS (SELECT 1 FROM team_members r
                  WHERE r.team_id = :teamId AND r.user_id = :revokerId AND r.role = :revokerRole)`,
        { revokerId: revoker.userId, revokerRole: revoker.role },
      )
      .andWhere(
        `(EXISTS (SELECT 1 FROM team_members m
                   WHERE m.team_id = :teamId AND m.user_id = personal_access_tokens.user_id
                     AND (m.user_id = :revokerId ${manages}))
          OR (:managesServiceAccounts = 1 AND EXISTS (SELECT 1 FROM users sa
                   WHERE sa.id = personal_access_tokens.user_id
                     AND sa.service_account_team_id = :teamId)))`,
        {
          manages: revoker.manages,
          // The team's owners and admins manage its service accounts' tokens.
          managesServiceAccounts: revoker.role === 'member' ? 0 : 1,
        },
      )
      .execute();
    return result.affected === 1;
  }

  /** The team's owners and admins, whom its service accounts' tokens concern (mail, say). */
  async findTeamManagers(manager: EntityManager, teamId: number): Promise<TeamManager[]> {
    const rows = await manager
      .getRepository(TeamMember)
      .createQueryBuilder('m')
      .innerJoin(User, 'u', 'u.id = m.user_id')
      .select(['u.id AS id', 'u.email AS email'])
      .where('m.team_id = :teamId', { teamId })
      .andWhere('m.role IN (:...roles)', { roles: ['owner', 'admin'] })
      .orderBy('u.id')
      .getRawMany<{ id: number | string; email: string }>();
    return rows.map((r) => ({ id: Number(r.id), email: r.email }));
  }

  /** Whether the account is a service account, and if so of which team; null for a person. */
  async findServiceAccountOwner(
    manager: EntityManager,
    userId: number,
  ): Promise<ServiceAccountOwner | null> {
    const row = await manager
      .getRepository(User)
      .createQueryBuilder('u')
      .innerJoin(Team, 'tm', 'tm.id = u.service_account_team_id')
      .select(['u.id AS account_id', 'u.name AS account_name'])
      .addSelect(['tm.id AS team_id', 'tm.name AS team_name'])
      .where('u.id = :userId', { userId })
      .getRawOne<Record<string, unknown>>();
    return row
      ? {
          accountId: Number(row.account_id),
          accountName: String(row.account_name),
          teamId: Number(row.team_id),
          teamName: String(row.team_name),
        }
      : null;
  }

  /**
   * One INSERT, its id from the driver's answer (mysql2's `insertId`, better-sqlite3's last row
   * id) rather than TypeORM's read-back of the columns with defaults: the row is read whole next.
   */
  async insert(manager: EntityManager, token: NewToken): Promise<PersonalAccessToken> {
    const tokens = manager.getRepository(PersonalAccessToken);
    const { raw } = await tokens
      .createQueryBuilder()
      .insert()
      .values(token)
      .updateEntity(false)
      .execute();
    const id = Number(
      typeof raw === 'object' && raw !== null && 'insertId' in raw ? raw.insertId : raw,
    );
    // The row as stored, made from what was written and the table's defaults, not read back.
    return tokens.create({ ...NEW_TOKEN_ROW, ...token, id });
  }

  /** One of the user's tokens, read through `manager` when given (inside a transaction). */
  findForOwner(
    userId: number,
    id: number,
    manager?: EntityManager,
  ): Promise<PersonalAccessToken | null> {
    return (manager?.getRepository(PersonalAccessToken) ?? this.tokens).findOneBy({ userId, id });
  }

  /**
   * One of the person's tokens with its pin, in one query, and the governance of that token
   * alone, from what the page's request already knows of the person (their teams, current one
   * and two-factor state): a token's page needs no other row of theirs.
   */
  async findOwnWithGovernance(
    userId: number,
    id: number,
    known: PersonSnapshot,
  ): Promise<{ token: PersonalAccessToken; governance: Governance } | null> {
    const found = (await this.tokens
      .createQueryBuilder('t')
      .leftJoinAndMapOne('t.pin', TokenPin, 'p', 'p.token_id = t.id')
      .where('t.user_id = :userId AND t.id = :id', { userId, id })
      .getOne()) as (PersonalAccessToken & { pin?: TokenPin | null }) | null;
    if (!found) return null;
    const { pin, ...token } = found;
    const teams = new Map(known.memberships.map((m) => [m.team.id, governing(m.team)]));
    const pinned = pin ? (pin.teamId === null ? null : (teams.get(pin.teamId) ?? null)) : undefined;
    return {
      token: Object.assign(new PersonalAccessToken(), token),
      governance: {
        currentTeam: (known.currentTeamId !== null && teams.get(known.currentTeamId)) || null,
        pins: new Map(pinned === undefined ? [] : [[id, pinned]]),
        twoFactor: known.twoFactor,
      },
    };
  }

  /** Every token the user has (revoked and expired ones until pruned), newest first. */
  /**
   * The person's tokens, newest first, with their pins, in one plain statement: the token page
   * reads it on every view.
   */
  async findAllForOwnerWithPins(
    userId: number,
  ): Promise<{ tokens: PersonalAccessToken[]; pins: TokenPinRow[] }> {
    const rows: Record<string, unknown>[] = await this.dataSource.manager.query(
      (this.ownedSql ??= `
        SELECT ${selectColumns(this.dataSource, PersonalAccessToken, 't')},
               p.token_id AS pinned, p.team_id AS pinned_team_id
          FROM personal_access_tokens t
          LEFT JOIN personal_access_token_pins p ON p.token_id = t.id
         WHERE t.user_id = ?
         ORDER BY t.created_at DESC, t.id DESC`),
      [userId],
    );
    return {
      tokens: rows.map((row) => entityOf(this.dataSource, PersonalAccessToken, row, 't')!),
      pins: rows
        .filter((row) => row.pinned != null)
        .map((row) => ({
          tokenId: Number(row.pinned),
          teamId: row.pinned_team_id as number | null,
        })),
    };
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

  /**
   * Writes the tokens' last uses in one statement: each token's own time, unless another
   * instance wrote one less than `intervalMs` before it in the meantime. At most 500 tokens a
   * call (the caller's batch), so the statement's parameters stay bounded.
   */
  async touchLastUsed(manager: EntityManager, uses: LastUse[], intervalMs: number): Promise<void> {
    if (uses.length === 0) return;
    const sqlite = this.dataSource.options.type === 'better-sqlite3';
    const cases = uses.map(() => 'WHEN ? THEN ?').join(' ');
    const each = (time: (use: LastUse) => Date) =>
      uses.flatMap((use) => [use.tokenId, toStoredTime(time(use), sqlite)]);
    // Raw SQL: TypeORM's named parameters rewrite the statement once per parameter.
    await manager.query(
      `UPDATE personal_access_tokens SET last_used_at = CASE id ${cases} END
        WHERE id IN (${uses.map(() => '?').join(', ')})
          AND (last_used_at IS NULL OR last_used_at < CASE id ${cases} END)`,
      [
        ...each((use) => use.at),
        ...uses.map((use) => use.tokenId),
        ...each((use) => new Date(use.at.getTime() - intervalMs)),
      ],
    );
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
      .select([
        't.id',
        't.userId',
        't.name',
        't.expiresAt',
        't.createdAt',
        't.regeneratedAt',
        't.lifetimeDays',
      ])
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
      lifetimeDays: t.lifetimeDays,
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
