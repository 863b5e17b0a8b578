import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log.js';
import {
  accountOf,
  knownOf,
  requireOperator,
  type Actor,
  type PersonSnapshot,
} from '../common/actor.js';
import type { KeysetPage } from '../common/keyset-page.js';
import { Transactions } from '../database/transactions.js';
import type { User } from '../users/user.entity.js';
import { toUserProfile, type UserProfile } from '../users/user.view.js';
import { UsersRepository } from '../users/users.repository.js';
import type { CreateTeamDto } from './dto/create-team.dto.js';
import type { TeamRole } from './team-member.entity.js';
import { TeamNotices } from './team-notices.js';
import { mayManage } from './team-roles.js';
import type { Team } from './team.entity.js';
import {
  NotTeamManagerError,
  NotTeamMemberError,
  ServiceAccountNotAllowedError,
  OwnerOnlyError,
  PersonalTeamError,
  TeamNotFoundError,
} from './teams.errors.js';
import {
  TeamsRepository,
  type MemberRow,
  type LiveSession,
  type TeamListing,
} from './teams.repository.js';

export interface TeamMembership {
  team: Team;
  role: TeamRole;
  current: boolean;
}

export interface TeamDetails {
  team: Team;
  /** The viewer's own role. */
  role: TeamRole;
  /**
   * `removable`: whether the viewer may remove this member (leaving is separate);
   * `roleEditable`: whether the viewer may make them a member or an admin.
   */
  members: { user: UserProfile; role: TeamRole; removable: boolean; roleEditable: boolean }[];
}

@Injectable()
export class TeamsService {
  constructor(
    private readonly audit: AuditLog,
    private readonly teams: TeamsRepository,
    private readonly users: UsersRepository,
    private readonly transactions: Transactions,
    private readonly notices: TeamNotices,
  ) {}

  /** A user's own team, made with the user (inside the caller's transaction). */
  async createPersonalTeam(manager: EntityManager, user: User): Promise<Team> {
    const firstName = user.name.split(/\s+/)[0];
    const team = await this.teams.insertWithOwner(manager, user.id, `${firstName}'s Team`, true);
    await this.users.setCurrentTeamIfMember(manager, user.id, team.id);
    return team;
  }

  /** Creates a team owned by the person and makes it their current team. */
  createTeam(actor: Actor, input: CreateTeamDto): Promise<Team> {
    const userId = accountOf(actor);
    return this.transactions.run(async (manager) => {
      await this.users.lockForUpdate(manager, userId);
      const team = await this.teams.insertWithOwner(manager, userId, input.name, false);
      await this.users.setCurrentTeamIfMember(manager, userId, team.id);
      this.audit.recordIn(manager, actor, {
        event: 'team.created',
        teamId: team.id,
        target: { type: 'team', id: team.id },
        detail: { name: team.name },
      });
      return team;
    });
  }

  /** A team by its slug: any team for the operator, only their own teams for a person. */
  async getBySlug(actor: Actor, slug: string): Promise<Team> {
    const team = await this.teams.findBySlug(slug);
    if (!team) throw new TeamNotFoundError();
    if (actor.kind !== 'operator') await this.requireMembership(accountOf(actor), team.id);
    return team;
  }

  /** A page of every team, by id after `afterId`: for the operator only. */
  allTeamsPage(actor: Actor, afterId: number, limit: number): Promise<TeamListing[]> {
    requireOperator(actor);
    return this.teams.findPageForOperator(afterId, limit);
  }

  /**
   * The person is deleting their account (in `manager`'s transaction, before their memberships
   * go): each team they are in and do not own has a "left" event in its log, and its owner is
   * mailed in the same transaction, so nobody leaves a team without a trace.
   */
  async noteAccountDeleted(manager: EntityManager, actor: Actor): Promise<number> {
    const userId = accountOf(actor);
    const member = await this.users.findById(userId, manager);
    if (!member) return 0;
    const teams = await this.teams.findJoinedTeams(manager, userId);
    for (const team of teams) {
      await this.notices.send(
        manager,
        team.ownerId,
        'member-deleted-account',
        team,
        '',
        `${member.name} (${member.email})`,
      );
      this.audit.recordIn(manager, actor, {
        event: 'team.member_left',
        userId,
        teamId: team.id,
        target: { type: 'user', id: userId },
        detail: { team: team.name, member: member.email, because: 'account deleted' },
      });
    }
    return teams.length;
  }

  /** Makes one of the person's teams current; a team they are not in is refused, nothing changes. */
  async switchTeam(actor: Actor, teamId: number): Promise<Team> {
    const switched = await this.transactions.run((m) =>
      this.users.setCurrentTeamIfMember(m, accountOf(actor), teamId),
    );
    const team = switched ? await this.teams.findById(teamId) : null;
    if (!team) throw new NotTeamMemberError();
    return team;
  }

  /**
   * A live session's stored data with the person signed in to it (their row, teams and
   * two-factor state, which the page's services then take from the actor, `PersonActor.known`),
   * in one query.
   */
  findLiveSession(sessionId: string, now: Date): Promise<LiveSession | null> {
    return this.teams.findLiveSession(sessionId, now);
  }

  async getCurrentTeam(actor: Actor): Promise<Team | null> {
    const known = knownOf(actor);
    if (known) {
      return (known.memberships.find((m) => m.team.id === known.currentTeamId)?.team ??
        null) as Team | null;
    }
    return this.teams.findCurrentOf(accountOf(actor));
  }

  /** Whether the person has two-factor sign-in on (the pages' reminder of a team's policy). */
  async hasTwoFactor(actor: Actor): Promise<boolean> {
    return knownOf(actor)?.twoFactor ?? this.teams.hasTwoFactor(accountOf(actor));
  }

  /** The person's teams with their role in each, by name. */
  async membershipsOf(actor: Actor): Promise<{ team: Team; role: TeamRole }[]> {
    const known = knownOf(actor);
    if (known) return known.memberships.map((m) => ({ team: m.team as Team, role: m.role }));
    return this.teams.findMembershipsOf(accountOf(actor));
  }

  async listForUser(actor: Actor): Promise<TeamMembership[]> {
    const [rows, current] = await Promise.all([
      this.membershipsOf(actor),
      this.getCurrentTeam(actor),
    ]);
    return rows.map((row) => ({ ...row, current: row.team.id === current?.id }));
  }

  /** A page of the person's teams with their role in each, by team id (one row beyond it). */
  teamsPage(actor: Actor, page: KeysetPage): Promise<{ team: Team; role: TeamRole }[]> {
    return this.teams.findMembershipsPage(accountOf(actor), page.after, page.limit + 1);
  }

  /**
   * A page of a team's members by user id (one row beyond it), for its members only: to anyone
   * else the team does not exist.
   */
  async membersPage(actor: Actor, teamId: number, page: KeysetPage): Promise<MemberRow[]> {
    const found = await this.teams.findMembersPage(
      teamId,
      accountOf(actor),
      page.after,
      page.limit + 1,
    );
    if (!found) throw await this.notAMember(accountOf(actor), teamId);
    return found.members;
  }

  /** A team with its members, for its members only: to anyone else it does not exist. */
  async getForMember(actor: Actor, teamId: number): Promise<TeamDetails> {
    const userId = accountOf(actor);
    const { team, role } = await this.requireMembership(userId, teamId, knownOf(actor));
    const members = (await this.teams.findMembers(team.id)).map((m) => ({
      user: toUserProfile(m.user!),
      role: m.role,
      removable: m.userId !== userId && mayManage(role, m.role),
      roleEditable: m.userId !== userId && mayManage(role, m.role),
    }));
    return { team, role, members };
  }

  /** Renames the team (owner or admin); the slug follows the name. */
  async rename(actor: Actor, teamId: number, input: CreateTeamDto): Promise<Team> {
    const team = await this.getManageableTeam(actor, teamId);
    const previousName = team.name;
    return this.transactions.run(async (m) => {
      const renamed = await this.teams.rename(m, team, input.name);
      if (renamed.name !== previousName) {
        this.audit.recordIn(m, actor, {
          event: 'team.renamed',
          teamId: team.id,
          target: { type: 'team', id: team.id },
          detail: { name: renamed.name, previous_name: previousName },
        });
      }
      return renamed;
    });
  }

  /**
   * The team and the person's role in it, when they may see its token inventory (owners and
   * admins); a member is refused (403), anyone else finds no team (404).
   */
  async getForManager(actor: Actor, teamId: number): Promise<{ team: Team; role: TeamRole }> {
    const membership = await this.requireMembership(accountOf(actor), teamId);
    if (membership.role === 'member') throw new NotTeamManagerError();
    return membership;
  }

  /**
   * The owner deletes a team that is not their personal one. Whoever worked in it moves to
   * their personal team in the same transaction; nothing is left pointing at it.
   */
  async deleteTeam(actor: Actor, teamId: number): Promise<Team> {
    const ownerId = accountOf(actor);
    const { team, role } = await this.requireMembership(ownerId, teamId);
    if (role !== 'owner') throw new OwnerOnlyError('delete the team');
    if (team.personal) throw new PersonalTeamError('A personal team cannot be deleted.');
    await this.transactions.run(async (m) => {
      const locked = await this.teams.lockForUpdate(m, team.id);
      // Deleted by a request that came first: the same outcome as asking after it.
      if (!locked) throw new TeamNotFoundError();
      if (locked.ownerId !== ownerId) throw new OwnerOnlyError('delete the team');
      await this.teams.deleteTeam(m, team.id);
      this.audit.recordIn(m, actor, {
        event: 'team.deleted',
        teamId: team.id,
        target: { type: 'team', id: team.id },
        detail: { name: team.name },
      });
    });
    return team;
  }

  /**
   * The team and the person's role in it; anyone else finds no team (404), but the team's own
   * service accounts are told they are not members (403). With `known` (the signed-in person's
   * snapshot), read from it instead of the database.
   */
  async requireMembership(
    userId: number,
    teamId: number,
    known?: PersonSnapshot,
  ): Promise<{ team: Team; role: TeamRole }> {
    const membership = known
      ? ((known.memberships.find((m) => m.team.id === teamId) as
          { team: Team; role: TeamRole } | undefined) ?? null)
      : await this.teams.findForMember(teamId, userId);
    // A signed-in person's page: never a service account.
    if (!membership) throw known ? new NotTeamMemberError() : await this.notAMember(userId, teamId);
    return membership;
  }

  /**
   * Why someone outside the team is refused: no such team (404), so team ids reveal nothing;
   * but a service account, to which its own team is no secret, is told it is not a member (403).
   */
  private async notAMember(userId: number, teamId: number): Promise<Error> {
    return (await this.teams.isServiceAccountOf(userId, teamId))
      ? new ServiceAccountNotAllowedError()
      : new NotTeamMemberError();
  }

  /**
   * Writes the member's row, unchanged but for its version, in the caller's transaction that
   * decided something on their role: on a cluster, a concurrent change of that role on another
   * node then conflicts with the decision at commit instead of passing beside it.
   */
  certifyRole(manager: EntityManager, teamId: number, userId: number): Promise<void> {
    return this.teams.certifyRole(manager, teamId, userId);
  }

  /**
   * In the caller's transaction, for a decision only an owner or an admin may take (a service
   * account made or deleted, or given a token): the actor's role read with its row locked and
   * written (its version), so the decision holds against a change of that role, on a cluster
   * too. The operator may always. Refused (404/403) as `getManageableTeam` refuses.
   */
  async certifyManager(manager: EntityManager, actor: Actor, teamId: number): Promise<void> {
    if (actor.kind === 'operator') return;
    const userId = accountOf(actor);
    const role = (await this.teams.lockRoles(manager, teamId, [userId])).get(userId);
    if (!role) throw new NotTeamMemberError();
    if (role === 'member') throw new NotTeamManagerError();
    await this.teams.certifyRole(manager, teamId, userId);
  }

  /** Whether the person is in the team. */
  async isMember(teamId: number, userId: number): Promise<boolean> {
    return (await this.teams.findForMember(teamId, userId)) !== null;
  }

  /** The team, if the actor may manage it: the operator always, a user as its owner or admin. */
  async getManageableTeam(actor: Actor, teamId: number): Promise<Team> {
    if (actor.kind === 'operator') {
      const team = await this.teams.findById(teamId);
      if (!team) throw new TeamNotFoundError();
      return team;
    }
    const { team, role } = await this.requireMembership(accountOf(actor), teamId);
    if (role === 'member') throw new NotTeamManagerError();
    return team;
  }
}
