import { AuditLog } from '../audit/audit-log.js';
import { Injectable } from '@nestjs/common';
import { AbilityCatalog } from '../config/abilities.config.js';
import type { EntityManager } from 'typeorm';
import {
  accountOf,
  knownOf,
  requireOperator,
  type Actor,
  type PersonSnapshot,
} from '../common/actor.js';
import { isUniqueViolation } from '../common/errors/database-errors.js';
import { Transactions } from '../database/transactions.js';
import { Events } from '../events/events.js';
import { isServiceAccount, type User } from '../users/user.entity.js';
import { UsersRepository } from '../users/users.repository.js';
import { ValidationError } from '../common/errors/domain.error.js';
import { toUserProfile, type UserProfile } from '../users/user.view.js';
import type { AddMemberDto, AssignableRole } from './dto/add-member.dto.js';
import type { CreateTeamDto } from './dto/create-team.dto.js';
import { TEAM_ROLES, type TeamRole } from './team-member.entity.js';
import type { Team } from './team.entity.js';
import {
  AlreadyMemberError,
  MemberNotFoundError,
  NotTeamManagerError,
  NotTeamMemberError,
  OwnerCannotLeaveError,
  OwnerOnlyError,
  OwnerRoleError,
  PersonalTeamError,
  ServiceAccountNotMemberError,
  TeamNotFoundError,
} from './teams.errors.js';
import { TeamNotices } from './team-notices.js';
import {
  TeamsRepository,
  type MemberRow,
  type SignedInPerson,
  type TeamListing,
} from './teams.repository.js';
import type { KeysetPage } from '../common/keyset-page.js';

/** A team's policy, as the owner sets it (see TeamsService.setPolicy). */
export interface TeamPolicyValues {
  requireTwoFactor: boolean;
  tokenMaxLifetimeDays: number | null;
  allowedAbilities: string[] | null;
}

/** What the owner's form asks for; abilities left out are kept as they are. */
export interface PolicyInput {
  requireTwoFactor: boolean;
  tokenMaxLifetimeDays: number | null;
  allowedAbilities?: string[] | null;
}

const policyValuesOf = (team: Team): TeamPolicyValues => ({
  requireTwoFactor: Boolean(team.requireTwoFactor),
  tokenMaxLifetimeDays: team.tokenMaxLifetimeDays ?? null,
  allowedAbilities: team.allowedAbilities ?? null,
});

declare module '../events/events.js' {
  interface DomainEvents {
    /**
     * The owner changed the team's policy, in the transaction that saves it (the tokens it
     * now refuses are mailed about with it).
     */
    'team.policy_changed': {
      actor: Actor;
      team: { id: number; name: string };
      previous: TeamPolicyValues;
      policy: TeamPolicyValues;
    };
  }
}

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

/**
 * Owners remove anyone but themselves and change anyone's role but their own; admins remove
 * members and change members' roles; members do neither. Only the owner acts on an admin, so an
 * admin cannot remove another in two steps (a change to member, then a removal).
 */
export function mayManage(actorRole: TeamRole, targetRole: TeamRole): boolean {
  return (
    targetRole !== 'owner' &&
    (actorRole === 'owner' || (actorRole === 'admin' && targetRole === 'member'))
  );
}

/** The roles a member with `actorRole` manages (see mayManage). */
export function managedRoles(actorRole: TeamRole): TeamRole[] {
  return TEAM_ROLES.filter((role) => mayManage(actorRole, role));
}

@Injectable()
export class TeamsService {
  constructor(
    private readonly audit: AuditLog,
    private readonly teams: TeamsRepository,
    private readonly users: UsersRepository,
    private readonly transactions: Transactions,
    private readonly notices: TeamNotices,
    private readonly catalog: AbilityCatalog,
    private readonly events: Events,
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
      this.audit.recordAfterCommit(manager, actor, {
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
    if (actor.kind !== 'operator') await this.getMembership(accountOf(actor), team.id);
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
      this.audit.recordAfterCommit(manager, actor, {
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
  findLiveSession(
    sessionId: string,
    now: Date,
  ): Promise<{ data: string; person: SignedInPerson | null } | null> {
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
    if (!found) throw new NotTeamMemberError();
    return found.members;
  }

  /** A team with its members, for its members only: to anyone else it does not exist. */
  async getForMember(actor: Actor, teamId: number): Promise<TeamDetails> {
    const userId = accountOf(actor);
    const { team, role } = await this.getMembership(userId, teamId, knownOf(actor));
    const members = (await this.teams.findMembers(team.id)).map((m) => ({
      user: toUserProfile(m.user!),
      role: m.role,
      removable: m.userId !== userId && mayManage(role, m.role),
      roleEditable: m.userId !== userId && mayManage(role, m.role),
    }));
    return { team, role, members };
  }

  async addMember(actor: Actor, teamId: number, input: AddMemberDto): Promise<User> {
    const team = await this.getManageableTeam(actor, teamId);
    if (team.personal) throw new PersonalTeamError();
    const user = await this.users.findByEmail(input.email);
    if (!user) throw new ValidationError({ email: 'No Tessera account uses that email.' });
    if (isServiceAccount(user)) throw new ServiceAccountNotMemberError();
    try {
      await this.transactions.run(async (m) => {
        await this.teams.insertMember(m, team.id, user.id, input.role);
        await this.notices.send(m, user.id, 'added', team, input.role);
        this.audit.recordAfterCommit(m, actor, {
          event: 'team.member_joined',
          userId: user.id,
          teamId: team.id,
          target: { type: 'user', id: user.id },
          detail: { team: team.name, member: user.email, role: input.role, added_by: actor.kind },
        });
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new AlreadyMemberError();
      throw error;
    }
    return user;
  }

  /**
   * Removes a member: owners and admins remove others, anyone may leave. The owner stays, and a
   * personal team has no one else. Whoever worked in the team is moved to their personal team
   * in the same transaction, so no request sees them in a team they left.
   */
  async removeMember(actor: Actor, teamId: number, userId: number): Promise<void> {
    const own = actor.kind === 'operator' ? undefined : accountOf(actor);
    const leaving = own === userId;
    const team = leaving
      ? (await this.getMembership(userId, teamId)).team
      : await this.getManageableTeam(actor, teamId);
    if (team.personal) throw new PersonalTeamError();
    if (team.ownerId === userId) throw new OwnerCannotLeaveError();
    await this.transactions.run(async (manager) => {
      if (!leaving && own !== undefined) {
        // Both roles read with their rows locked: the decision holds until the delete.
        const roles = await this.teams.lockRoles(manager, team.id, [own, userId]);
        const ownRole = roles.get(own);
        const target = roles.get(userId);
        // Gone since the check above (the team deleted, or the actor removed): no team to them.
        if (!ownRole) throw new NotTeamMemberError();
        if (ownRole === 'member') throw new NotTeamManagerError();
        if (target && !mayManage(ownRole, target)) throw new OwnerOnlyError('remove an admin');
        await this.teams.certifyRole(manager, team.id, own);
      }
      if (!(await this.teams.deleteMember(manager, team.id, userId)))
        throw new MemberNotFoundError();
      await this.teams.resetCurrentTeam(manager, userId, team.id);
      if (!leaving) await this.notices.send(manager, userId, 'removed', team);
      const member = await this.users.findById(userId, manager);
      this.audit.recordAfterCommit(manager, actor, {
        event: leaving ? 'team.member_left' : 'team.member_removed',
        userId,
        teamId: team.id,
        target: { type: 'user', id: userId },
        detail: { team: team.name, member: member?.email ?? null },
      });
    });
  }

  /** Renames the team (owner or admin); the slug follows the name. */
  async rename(actor: Actor, teamId: number, input: CreateTeamDto): Promise<Team> {
    const team = await this.getManageableTeam(actor, teamId);
    const previousName = team.name;
    return this.transactions.run(async (m) => {
      const renamed = await this.teams.rename(m, team, input.name);
      if (renamed.name !== previousName) {
        this.audit.recordAfterCommit(m, actor, {
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
   * Changes a member's role to member or admin. The owner changes anyone's; an admin changes
   * members' only (making one an admin, say); the owner's own role changes only by a transfer.
   */
  async changeRole(
    actor: Actor,
    teamId: number,
    userId: number,
    role: AssignableRole,
  ): Promise<User> {
    const team = await this.getManageableTeam(actor, teamId);
    const actorId = accountOf(actor);
    await this.transactions.run(async (m) => {
      // Both roles read with their rows locked: the decision holds until the write.
      const roles = await this.teams.lockRoles(m, team.id, [actorId, userId]);
      const own = roles.get(actorId);
      const previous = roles.get(userId);
      if (!own) throw new NotTeamMemberError();
      if (own === 'member') throw new NotTeamManagerError();
      if (!previous) throw new MemberNotFoundError();
      if (previous === 'owner') throw new OwnerRoleError();
      if (!mayManage(own, previous) || actorId === userId) {
        throw new OwnerOnlyError("change an admin's role");
      }
      await this.teams.certifyRole(m, team.id, actorId);
      if (!(await this.teams.setRole(m, team.id, userId, role))) throw new MemberNotFoundError();
      if (previous === role) return;
      await this.notices.send(m, userId, 'role', team, role);
      const member = await this.users.findById(userId, m);
      this.audit.recordAfterCommit(m, actor, {
        event: 'team.role_changed',
        userId,
        teamId: team.id,
        target: { type: 'user', id: userId },
        detail: { team: team.name, member: member?.email ?? null, role, previous_role: previous },
      });
    });
    return (await this.users.findById(userId))!;
  }

  /** The owner hands the team to another member, who becomes owner; the old owner, an admin. */
  async transfer(actor: Actor, teamId: number, newOwnerId: number): Promise<User> {
    const ownerId = accountOf(actor);
    const { team, role } = await this.getMembership(ownerId, teamId);
    if (role !== 'owner') throw new OwnerOnlyError('transfer the team');
    if (team.personal) throw new PersonalTeamError('A personal team cannot be transferred.');
    if (newOwnerId === ownerId) throw new MemberNotFoundError();
    await this.transactions.run(async (m) => {
      if (!(await this.teams.lockForUpdate(m, team.id))) throw new TeamNotFoundError();
      // The heir must be a member, read under lock before the team names them its owner: an id
      // that is nobody's would otherwise reach the owner's foreign key.
      if (!(await this.teams.lockRoles(m, team.id, [newOwnerId])).has(newOwnerId)) {
        throw new MemberNotFoundError();
      }
      if (!(await this.teams.setOwner(m, team.id, ownerId, newOwnerId))) {
        throw new OwnerOnlyError('transfer the team');
      }
      await this.teams.setRole(m, team.id, newOwnerId, 'owner');
      await this.teams.setRole(m, team.id, ownerId, 'admin');
      await this.notices.send(m, newOwnerId, 'transferred-to', team);
      await this.notices.send(m, ownerId, 'transferred-away', team);
      const owner = await this.users.findById(newOwnerId, m);
      this.audit.recordAfterCommit(m, actor, {
        event: 'team.ownership_transferred',
        userId: newOwnerId,
        teamId: team.id,
        target: { type: 'user', id: newOwnerId },
        detail: { team: team.name, new_owner: owner?.email ?? null },
      });
    });
    return (await this.users.findById(newOwnerId))!;
  }

  /**
   * The policy the owner asks for, checked as saving it would check it (the owner alone; two-
   * factor sign-in required only by an owner who has it; abilities the catalog offers), without
   * saving anything: what the team page shows the effect of before it is saved.
   */
  async proposePolicy(
    actor: Actor,
    teamId: number,
    input: PolicyInput,
  ): Promise<{ team: Team; policy: TeamPolicyValues }> {
    const ownerId = accountOf(actor);
    const allowed =
      input.allowedAbilities === undefined ? undefined : this.allowedOf(input.allowedAbilities);
    const { team, role } = await this.getMembership(ownerId, teamId);
    if (role !== 'owner') throw new OwnerOnlyError("change the team's policy");
    if (input.requireTwoFactor && !(await this.teams.hasTwoFactor(ownerId))) {
      throw new ValidationError({
        require_two_factor:
          'Turn on two-factor sign-in for yourself first (Account Settings, Security): the team would refuse your own tokens.',
      });
    }
    const policy = {
      requireTwoFactor: input.requireTwoFactor,
      tokenMaxLifetimeDays: input.tokenMaxLifetimeDays,
      allowedAbilities: allowed === undefined ? (team.allowedAbilities ?? null) : allowed,
    };
    return { team, policy };
  }

  /**
   * The owner sets the team's policy: two-factor sign-in required of every member whose
   * tokens act in it, a maximum token lifetime, and the abilities tokens acting in it may use
   * (left out: as they are; every ability of the catalog: no limit). Requiring two-factor
   * sign-in needs the owner's own on; turning it on mails every member without it. Takes
   * effect on the very next API request (the policy is read with each token). A change is
   * published (`team.policy_changed`) in its transaction: the owners of the tokens it refuses
   * are told by mail with it.
   */
  async setPolicy(actor: Actor, teamId: number, input: PolicyInput): Promise<Team> {
    const ownerId = accountOf(actor);
    const { team, policy: proposed } = await this.proposePolicy(actor, teamId, input);
    return this.transactions.run(async (m) => {
      const locked = await this.teams.lockForUpdate(m, team.id);
      if (!locked) throw new TeamNotFoundError();
      if (locked.ownerId !== ownerId) throw new OwnerOnlyError("change the team's policy");
      const previous = policyValuesOf(locked);
      const policy = {
        ...proposed,
        allowedAbilities:
          input.allowedAbilities === undefined
            ? previous.allowedAbilities
            : proposed.allowedAbilities,
      };
      await this.teams.setPolicy(m, team.id, policy);
      const listed = (names: string[] | null) => (names === null ? 'all' : names.join(' '));
      const changed =
        previous.requireTwoFactor !== policy.requireTwoFactor ||
        previous.tokenMaxLifetimeDays !== policy.tokenMaxLifetimeDays ||
        listed(previous.allowedAbilities) !== listed(policy.allowedAbilities);
      if (policy.requireTwoFactor && !previous.requireTwoFactor) {
        for (const userId of await this.teams.findMembersWithoutTwoFactor(m, team.id)) {
          await this.notices.send(m, userId, 'two-factor-required', team);
        }
      }
      if (changed) {
        const changedTeam = { id: team.id, name: team.name };
        await this.events.publish(m, 'team.policy_changed', {
          actor,
          team: changedTeam,
          previous,
          policy,
        });
        this.audit.recordAfterCommit(m, actor, {
          event: 'team.policy_changed',
          teamId: team.id,
          target: { type: 'team', id: team.id },
          detail: {
            team: team.name,
            require_two_factor: policy.requireTwoFactor,
            token_max_lifetime_days: policy.tokenMaxLifetimeDays,
            allowed_abilities: listed(policy.allowedAbilities),
            previous_require_two_factor: previous.requireTwoFactor,
            previous_token_max_lifetime_days: previous.tokenMaxLifetimeDays,
            previous_allowed_abilities: listed(previous.allowedAbilities),
          },
        });
      }
      return Object.assign(locked, policy);
    });
  }

  /**
   * The abilities a policy allows, in the catalog's order: null (no limit) for all of them.
   * A name the catalog does not offer, or none at all, is refused.
   */
  private allowedOf(names: string[] | null): string[] | null {
    if (names === null) return null;
    const unknown = this.catalog.retired(names);
    if (unknown.length > 0) {
      throw new ValidationError({
        allowed_abilities: `This deployment offers no ability ${unknown.map((a) => `"${a}"`).join(', ')}.`,
      });
    }
    const allowed = this.catalog.offered(names);
    if (allowed.length === 0) {
      throw new ValidationError({ allowed_abilities: 'Allow tokens at least one ability.' });
    }
    return allowed.length === this.catalog.entries.length ? null : allowed;
  }

  /**
   * The team and the person's role in it, when they may see its token inventory (owners and
   * admins); a member is refused (403), anyone else finds no team (404).
   */
  async getForManager(actor: Actor, teamId: number): Promise<{ team: Team; role: TeamRole }> {
    const membership = await this.getMembership(accountOf(actor), teamId);
    if (membership.role === 'member') throw new NotTeamManagerError();
    return membership;
  }

  /** A member other than the owner leaves; their current team, if it was this, becomes their own. */
  leave(actor: Actor, teamId: number): Promise<void> {
    return this.removeMember(actor, teamId, accountOf(actor));
  }

  /**
   * The owner deletes a team that is not their personal one. Whoever worked in it moves to
   * their personal team in the same transaction; nothing is left pointing at it.
   */
  async deleteTeam(actor: Actor, teamId: number): Promise<Team> {
    const ownerId = accountOf(actor);
    const { team, role } = await this.getMembership(ownerId, teamId);
    if (role !== 'owner') throw new OwnerOnlyError('delete the team');
    if (team.personal) throw new PersonalTeamError('A personal team cannot be deleted.');
    await this.transactions.run(async (m) => {
      const locked = await this.teams.lockForUpdate(m, team.id);
      // Deleted by a request that came first: the same outcome as asking after it.
      if (!locked) throw new TeamNotFoundError();
      if (locked.ownerId !== ownerId) throw new OwnerOnlyError('delete the team');
      await this.teams.deleteTeam(m, team.id);
      this.audit.recordAfterCommit(m, actor, {
        event: 'team.deleted',
        teamId: team.id,
        target: { type: 'team', id: team.id },
        detail: { name: team.name },
      });
    });
    return team;
  }

  private async getMembership(
    userId: number,
    teamId: number,
    known?: PersonSnapshot,
  ): Promise<{ team: Team; role: TeamRole }> {
    const membership = known
      ? ((known.memberships.find((m) => m.team.id === teamId) as
          { team: Team; role: TeamRole } | undefined) ?? null)
      : await this.teams.findForMember(teamId, userId);
    if (!membership) throw new NotTeamMemberError();
    return membership;
  }

  /**
   * Adds the person to the team with the role (kept as it is when they are in it already) and
   * makes it their current team, inside the caller's transaction: accepting an invitation.
   */
  async join(
    manager: EntityManager,
    actor: Actor,
    teamId: number,
    role: AssignableRole,
  ): Promise<void> {
    const userId = accountOf(actor);
    await this.users.lockForUpdate(manager, userId);
    const joining = await this.users.findById(userId, manager);
    if (!joining || isServiceAccount(joining)) throw new ServiceAccountNotMemberError();
    if (!(await this.teams.findForMember(teamId, userId, manager))) {
      await this.teams.insertMember(manager, teamId, userId, role);
      const team = await this.teams.findById(teamId, manager);
      const user = joining;
      this.audit.recordAfterCommit(manager, actor, {
        event: 'team.member_joined',
        teamId,
        target: { type: 'user', id: userId },
        detail: { team: team?.name ?? null, member: user?.email ?? null, role, via: 'invitation' },
      });
    }
    await this.users.setCurrentTeamIfMember(manager, userId, teamId);
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
    const { team, role } = await this.getMembership(accountOf(actor), teamId);
    if (role === 'member') throw new NotTeamManagerError();
    return team;
  }
}
