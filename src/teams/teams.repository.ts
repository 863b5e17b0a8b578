import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In, Like } from 'typeorm';
import type { PersonSnapshot } from '../common/actor.js';
import { isUniqueViolation } from '../common/errors/database-errors.js';
import { entityOf, selectColumns, toDate, toStoredTime } from '../database/plain-rows.js';
import { nextFreeSlug, randomSlug, slugify } from './slug.js';
import { TeamMember, type TeamRole } from './team-member.entity.js';
import { User } from '../users/user.entity.js';
import { Team } from './team.entity.js';
import { TwoFactorCredential } from '../two-factor/two-factor-credential.entity.js';

const SLUG_ATTEMPTS = 5;

/** The person a page's session is signed in to, as read with the session. */
export interface SignedInPerson {
  user: User;
  known: PersonSnapshot;
}

/** A live browser session's data, the version of it read, and the person signed in to it. */
export interface LiveSession {
  data: string;
  version: number;
  person: SignedInPerson | null;
}

/** A member as a page of the team's members lists them. */
export interface MemberRow {
  userId: number;
  name: string;
  email: string;
  role: TeamRole;
  joinedAt: Date;
}

/**
 * A page of a team's members as one of them sees it: the viewer's membership row, joined with
 * the members after the cursor by user id (the primary key's second column, so the page is a
 * range of the index). A plain statement: the list is read on every request of the members
 * endpoint, and TypeORM's query builder cost more than the query.
 */
const MEMBERS_PAGE_SQL = `
  SELECT me.role AS viewer_role, m.user_id AS user_id, m.role AS role, m.created_at AS joined_at,
         u.name AS name, u.email AS email
    FROM team_members me
    LEFT JOIN team_members m ON m.team_id = me.team_id AND m.user_id > ?
    LEFT JOIN users u ON u.id = m.user_id
   WHERE me.team_id = ? AND me.user_id = ?
   ORDER BY m.user_id
   LIMIT ?`;

interface RawMemberRow {
  viewer_role: TeamRole;
  user_id: number | string | null;
  role: TeamRole | null;
  joined_at: Date | string | null;
  name: string | null;
  email: string | null;
}

/** A team as the operator's list shows it. */
export interface TeamListing {
  id: number;
  name: string;
  slug: string;
  personal: boolean;
  ownerEmail: string;
  members: number;
}

@Injectable()
export class TeamsRepository {
  private liveSession?: string;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get manager(): EntityManager {
    return this.dataSource.manager;
  }

  /** Inserts a team with a slug made from its name, and its owner as a member. */
  async insertWithOwner(
    manager: EntityManager,
    ownerId: number,
    name: string,
    personal: boolean,
  ): Promise<Team> {
    const team = await this.withFreeSlug(manager, name, undefined, (m, slug) =>
      m.getRepository(Team).save(m.getRepository(Team).create({ name, slug, ownerId, personal })),
    );
    await manager
      .getRepository(TeamMember)
      .insert({ teamId: team.id, userId: ownerId, role: 'owner' });
    return team;
  }

  /**
   * Renames a team; its slug follows the new name (kept when the name still gives the same
   * one), made unique as at creation.
   */
  async rename(manager: EntityManager, team: Team, name: string): Promise<Team> {
    const base = slugify(name);
    const keep = team.slug === base || team.slug.startsWith(`${base}-`);
    const slug = keep
      ? team.slug
      : await this.withFreeSlug(manager, name, team.id, async (m, free) => {
          await m.getRepository(Team).update({ id: team.id }, { name, slug: free });
          return free;
        });
    if (keep) await manager.getRepository(Team).update({ id: team.id }, { name });
    return Object.assign(team, { name, slug });
  }

  /**
   * Runs `write` with a slug made from the name: first the next free `base-N`; when another
   * request took that slug at the same moment (the unique index refuses the write), each
   * further try adds a random suffix, so requests racing for one name do not keep choosing the
   * same next number. `ownTeamId`'s own slug does not count as taken.
   */
  private async withFreeSlug<T>(
    manager: EntityManager,
    name: string,
    ownTeamId: number | undefined,
    write: (manager: EntityManager, slug: string) => Promise<T>,
  ): Promise<T> {
    const base = slugify(name);
    const taken = await manager.getRepository(Team).find({
      select: { id: true, slug: true },
      where: [{ slug: base }, { slug: Like(`${base}-%`) }],
    });
    let slug = nextFreeSlug(
      base,
      taken.filter((t) => t.id !== ownTeamId).map((t) => t.slug),
    );
    for (let attempt = 1; ; attempt++) {
      try {
        // A savepoint, so a slug collision undoes only this write, not the caller's work.
        return await manager.transaction((m) => write(m, slug));
      } catch (error) {
        if (!isUniqueViolation(error, 'slug') || attempt >= SLUG_ATTEMPTS) throw error;
        slug = randomSlug(base);
      }
    }
  }

  findById(id: number, manager: EntityManager = this.manager): Promise<Team | null> {
    return manager.getRepository(Team).findOneBy({ id });
  }

  /** The team the user works in now, if any. */
  findCurrentOf(userId: number): Promise<Team | null> {
    return this.manager
      .getRepository(Team)
      .createQueryBuilder('team')
      .innerJoin(User, 'user', 'user.current_team_id = team.id')
      .where('user.id = :userId', { userId })
      .getOne();
  }

  findBySlug(slug: string): Promise<Team | null> {
    return this.manager.getRepository(Team).findOneBy({ slug });
  }

  /**
   * A page of every team by id after `afterId`, with its owner's address and how many members
   * it has, in one query: the operator's list.
   */
  async findPageForOperator(afterId: number, limit: number): Promise<TeamListing[]> {
    const rows: {
      id: number;
      name: string;
      slug: string;
      personal: number | boolean;
      owner_email: string;
      members: number | string;
    }[] = await this.manager
      .getRepository(Team)
      .createQueryBuilder('t')
      .select(['t.id AS id', 't.name AS name', 't.slug AS slug', 't.personal AS personal'])
      .addSelect('u.email', 'owner_email')
      .addSelect('(SELECT COUNT(*) FROM team_members m WHERE m.team_id = t.id)', 'members')
      .innerJoin('users', 'u', 'u.id = t.owner_id')
      .where('t.id > :afterId', { afterId })
      .orderBy('t.id', 'ASC')
      .limit(limit)
      .getRawMany();
    return rows.map((row) => ({
      id: Number(row.id),
      name: row.name,
      slug: row.slug,
      personal: Boolean(Number(row.personal)),
      ownerEmail: row.owner_email,
      members: Number(row.members),
    }));
  }

  /** The team as seen by one of its members, with their role; null for anyone else. */
  async findForMember(
    teamId: number,
    userId: number,
    manager: EntityManager = this.manager,
  ): Promise<{ team: Team; role: TeamRole } | null> {
    const membership = await manager
      .getRepository(TeamMember)
      .findOne({ where: { teamId, userId }, relations: { team: true } });
    return membership ? { team: membership.team!, role: membership.role } : null;
  }

  /** Whether the account is one of the team's service accounts (which are never its members). */
  async isServiceAccountOf(userId: number, teamId: number): Promise<boolean> {
    return (
      (await this.manager
        .getRepository(User)
        .countBy({ id: userId, serviceAccountTeamId: teamId })) > 0
    );
  }

  /** The teams the user is in and does not own, with their owners, in `manager`'s transaction. */
  findJoinedTeams(manager: EntityManager, userId: number): Promise<Team[]> {
    return manager
      .getRepository(Team)
      .createQueryBuilder('t')
      .innerJoin(TeamMember, 'm', 'm.team_id = t.id AND m.user_id = :userId', { userId })
      .where('t.owner_id <> :userId', { userId })
      .orderBy('t.id', 'ASC')
      .getMany();
  }

  /**
   * A live session's stored data with the person signed in to it: their row, their teams with
   * their role in each (by name) and their two-factor state, in one query, the one every page
   * request reads on arrival. `person` is null for a session nobody is signed in to, or whose
   * account is gone.
   */
  async findLiveSession(sessionId: string, now: Date): Promise<LiveSession | null> {
    const sqlite = this.dataSource.options.type === 'better-sqlite3';
    const rows: Record<string, unknown>[] = await this.manager.query(this.liveSessionSql(), [
      sessionId,
      toStoredTime(now, sqlite),
    ]);
    if (rows.length === 0) return null;
    const data = String(rows[0].s_data);
    const version = Number(rows[0].s_version);
    const user = entityOf(this.dataSource, User, rows[0], 'u');
    if (!user) return { data, version, person: null };
    const memberships = rows.flatMap((row) => {
      const team = entityOf(this.dataSource, Team, row, 't');
      return team ? [{ team, role: row.m_role as TeamRole }] : [];
    });
    return {
      data,
      version,
      person: {
        user,
        known: {
          email: user.email,
          emailVerifiedAt: user.emailVerifiedAt,
          currentTeamId: user.currentTeamId,
          memberships,
          twoFactor: Number(rows[0].two_factor) === 1,
        },
      },
    };
  }

  /**
   * `findLiveSession`'s statement, made once: a plain statement, since building it with the
   * query builder on every page cost more than running it.
   */
  private liveSessionSql(): string {
    return (this.liveSession ??= `
      SELECT s.data AS s_data, s.version AS s_version, ${selectColumns(this.dataSource, User, 'u')},
             m.role AS m_role, ${selectColumns(this.dataSource, Team, 't')},
             CASE WHEN EXISTS (SELECT 1 FROM two_factor_credentials c WHERE c.user_id = u.id)
                  THEN 1 ELSE 0 END AS two_factor
        FROM sessions s
        LEFT JOIN users u ON u.id = s.user_id
        LEFT JOIN team_members m ON m.user_id = u.id
        LEFT JOIN teams t ON t.id = m.team_id
       WHERE s.id = ? AND s.expires_at > ?
       ORDER BY t.name, t.id`);
  }

  /** The user's teams with their role in each, by name. */
  async findMembershipsOf(userId: number): Promise<{ team: Team; role: TeamRole }[]> {
    const rows = await this.manager.getRepository(TeamMember).find({
      where: { userId },
      relations: { team: true },
      order: { team: { name: 'ASC', id: 'ASC' } },
    });
    return rows.map((row) => ({ team: row.team!, role: row.role }));
  }

  /** A page of the user's teams with their role in each, by team id after `afterTeamId`. */
  async findMembershipsPage(
    userId: number,
    afterTeamId: number | undefined,
    limit: number,
  ): Promise<{ team: Team; role: TeamRole }[]> {
    const query = this.manager
      .getRepository(TeamMember)
      .createQueryBuilder('m')
      .innerJoinAndSelect('m.team', 'team')
      .where('m.user_id = :userId', { userId })
      .orderBy('m.team_id', 'ASC')
      .take(limit);
    if (afterTeamId !== undefined) query.andWhere('m.team_id > :afterTeamId', { afterTeamId });
    const rows = await query.getMany();
    return rows.map((row) => ({ team: row.team!, role: row.role }));
  }

  /**
   * A page of the team's members by user id after `afterUserId`, as one of them sees it, in one
   * query: the viewer's own membership row joined with the page, so a viewer outside the team
   * gets null, and a member past the last page an empty page.
   */
  async findMembersPage(
    teamId: number,
    viewerId: number,
    afterUserId: number | undefined,
    limit: number,
  ): Promise<{ viewerRole: TeamRole; members: MemberRow[] } | null> {
    const rows: RawMemberRow[] = await this.manager.query(MEMBERS_PAGE_SQL, [
      afterUserId ?? 0,
      teamId,
      viewerId,
      limit,
    ]);
    if (rows.length === 0) return null;
    const members = rows
      .filter((row) => row.user_id !== null)
      .map((row) => ({
        userId: Number(row.user_id),
        name: row.name!,
        email: row.email!,
        role: row.role!,
        joinedAt: toDate(row.joined_at)!,
      }));
    return { viewerRole: rows[0].viewer_role, members };
  }

  /** Members with their users, owner first, then by when they joined. */
  findMembers(teamId: number): Promise<TeamMember[]> {
    return this.manager.getRepository(TeamMember).find({
      where: { teamId },
      relations: { user: true },
      order: { createdAt: 'ASC', userId: 'ASC' },
    });
  }

  async deleteMember(manager: EntityManager, teamId: number, userId: number): Promise<boolean> {
    const result = await manager.getRepository(TeamMember).delete({ teamId, userId });
    return (result.affected ?? 0) > 0;
  }

  /** Sends a user whose current team is `teamId` back to their personal team. */
  async resetCurrentTeam(manager: EntityManager, userId: number, teamId: number): Promise<void> {
    const personal = await manager
      .getRepository(Team)
      .findOneBy({ ownerId: userId, personal: true });
    await manager
      .createQueryBuilder()
      .update(User)
      .set({ currentTeamId: personal?.id ?? null })
      .where('id = :userId AND current_team_id = :teamId', { userId, teamId })
      .execute();
  }

  async insertMember(
    manager: EntityManager,
    teamId: number,
    userId: number,
    role: TeamRole,
  ): Promise<void> {
    await manager.getRepository(TeamMember).insert({ teamId, userId, role });
  }

  /**
   * The roles of the members among `userIds` in the team, read with their rows locked for the
   * rest of the transaction (MySQL/MariaDB; SQLite's transactions are serial already): a decision
   * taken on them holds until the transaction writes it.
   */
  async lockRoles(
    manager: EntityManager,
    teamId: number,
    userIds: number[],
  ): Promise<Map<number, TeamRole>> {
    const sqlite = manager.connection.options.type === 'better-sqlite3';
    const rows = await manager.getRepository(TeamMember).find({
      select: { userId: true, role: true },
      where: { teamId, userId: In(userIds) },
      order: { userId: 'ASC' },
      ...(sqlite ? {} : { lock: { mode: 'pessimistic_write' as const } }),
    });
    return new Map(rows.map((row) => [row.userId, row.role]));
  }

  /**
   * Writes the member's row without changing their role (its version counts up), in the
   * transaction that decided something on that role. A row lock does not reach the other nodes
   * of a Galera cluster or a Group Replication group; a write does: a concurrent change of the
   * role on another node then conflicts with this transaction at commit, and one of the two is
   * run again and sees the other, as on a single server.
   */
  async certifyRole(manager: EntityManager, teamId: number, userId: number): Promise<void> {
    await manager
      .createQueryBuilder()
      .update(TeamMember)
      .set({ version: () => 'version + 1' })
      .where('team_id = :teamId AND user_id = :userId', { teamId, userId })
      .execute();
  }

  /** Sets a member's role; false when they are not (or no longer) a member. */
  async setRole(
    manager: EntityManager,
    teamId: number,
    userId: number,
    role: TeamRole,
  ): Promise<boolean> {
    const result = await manager.getRepository(TeamMember).update({ teamId, userId }, { role });
    return (result.affected ?? 0) > 0;
  }

  /** Makes `newOwnerId` the owner, if `oldOwnerId` still is; false otherwise. */
  async setOwner(
    manager: EntityManager,
    teamId: number,
    oldOwnerId: number,
    newOwnerId: number,
  ): Promise<boolean> {
    const result = await manager
      .getRepository(Team)
      .update({ id: teamId, ownerId: oldOwnerId }, { ownerId: newOwnerId });
    return (result.affected ?? 0) > 0;
  }

  /**
   * Deletes a team: its memberships first (so no switch to it can succeed from then on), then
   * everyone who worked in it goes back to their personal team, then the team itself.
   */
  async deleteTeam(manager: EntityManager, teamId: number): Promise<void> {
    await manager.getRepository(TeamMember).delete({ teamId });
    await manager
      .createQueryBuilder()
      .update(User)
      .set({
        currentTeamId: () =>
          '(SELECT t.id FROM teams t WHERE t.owner_id = users.id AND t.personal = :personal)',
      })
      .where('current_team_id = :teamId', { teamId, personal: true })
      .execute();
    await manager.getRepository(Team).delete({ id: teamId });
  }

  /** Takes the team's row lock for the rest of the transaction (MySQL/MariaDB). */
  /** Sets the team's policy. */
  async setPolicy(
    manager: EntityManager,
    teamId: number,
    policy: Pick<Team, 'requireTwoFactor' | 'tokenMaxLifetimeDays' | 'allowedAbilities'>,
  ): Promise<void> {
    await manager.getRepository(Team).update({ id: teamId }, policy);
  }

  /** Whether the person has two-factor sign-in on. */
  hasTwoFactor(userId: number, manager: EntityManager = this.manager): Promise<boolean> {
    return manager.getRepository(TwoFactorCredential).exists({ where: { userId } });
  }

  /** The ids of the team's members who have not turned two-factor sign-in on. */
  async findMembersWithoutTwoFactor(manager: EntityManager, teamId: number): Promise<number[]> {
    const rows = await manager
      .getRepository(TeamMember)
      .createQueryBuilder('m')
      .leftJoin(TwoFactorCredential, 'tf', 'tf.user_id = m.user_id')
      .select('m.user_id', 'userId')
      .where('m.team_id = :teamId', { teamId })
      .andWhere('tf.user_id IS NULL')
      .orderBy('m.user_id')
      .getRawMany<{ userId: number | string }>();
    return rows.map((r) => Number(r.userId));
  }

  async lockForUpdate(manager: EntityManager, teamId: number): Promise<Team | null> {
    const sqlite = manager.connection.options.type === 'better-sqlite3';
    return manager.getRepository(Team).findOne({
      where: { id: teamId },
      ...(sqlite ? {} : { lock: { mode: 'pessimistic_write' as const } }),
    });
  }
}
