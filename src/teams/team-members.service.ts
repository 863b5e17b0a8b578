import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log.js';
import { accountOf, type Actor } from '../common/actor.js';
import { isUniqueViolation } from '../common/errors/database-errors.js';
import { ValidationError } from '../common/errors/domain.error.js';
import { Transactions } from '../database/transactions.js';
import { isServiceAccount, type User } from '../users/user.entity.js';
import { UsersRepository } from '../users/users.repository.js';
import type { AddMemberDto, AssignableRole } from './dto/add-member.dto.js';
import { TeamNotices } from './team-notices.js';
import { mayManage } from './team-roles.js';
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
import { TeamsRepository } from './teams.repository.js';
import { TeamsService } from './teams.service.js';

/**
 * Who is in a team, and with which role: adding and removing members, leaving, joining by
 * invitation, changing a role, handing the team to another owner. Removals, role changes and
 * transfers are decided on the roles read with their rows locked; every change is in the team's
 * audit log.
 */
@Injectable()
export class TeamMembersService {
  constructor(
    private readonly audit: AuditLog,
    private readonly teams: TeamsRepository,
    private readonly access: TeamsService,
    private readonly users: UsersRepository,
    private readonly transactions: Transactions,
    private readonly notices: TeamNotices,
  ) {}

  async addMember(actor: Actor, teamId: number, input: AddMemberDto): Promise<User> {
    const team = await this.access.getManageableTeam(actor, teamId);
    if (team.personal) throw new PersonalTeamError();
    const user = await this.users.findByEmail(input.email);
    if (!user) throw new ValidationError({ email: 'No Tessera account uses that email.' });
    if (isServiceAccount(user)) throw new ServiceAccountNotMemberError();
    try {
      await this.transactions.run(async (m) => {
        await this.teams.insertMember(m, team.id, user.id, input.role);
        await this.notices.send(m, user.id, 'added', team, input.role);
        this.audit.recordIn(m, actor, {
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
      ? (await this.access.requireMembership(userId, teamId)).team
      : await this.access.getManageableTeam(actor, teamId);
    if (team.personal) throw new PersonalTeamError();
    if (team.ownerId === userId) throw new OwnerCannotLeaveError();
    await this.transactions.run(async (manager) => {
      const managing = !leaving && own !== undefined;
      // The roles read with their rows locked (the remover's too, unless they leave or are the
      // operator): the decision holds until the delete. The owner's role may have come to the
      // one leaving since the check above (a transfer at the same moment): the owner stays.
      const roles = await this.teams.lockRoles(
        manager,
        team.id,
        managing ? [own, userId] : [userId],
      );
      const target = roles.get(userId);
      if (target === 'owner') throw new OwnerCannotLeaveError();
      if (managing) {
        const ownRole = roles.get(own);
        // Gone since the check above (the team deleted, or the actor removed): no team to them.
        if (!ownRole) throw new NotTeamMemberError();
        if (ownRole === 'member') throw new NotTeamManagerError();
        if (target && !mayManage(ownRole, target)) throw new OwnerOnlyError('remove an admin');
        await this.teams.certifyRole(manager, team.id, own);
      }
      if (!target || !(await this.teams.deleteMember(manager, team.id, userId)))
        throw new MemberNotFoundError();
      await this.teams.resetCurrentTeam(manager, userId, team.id);
      if (!leaving) await this.notices.send(manager, userId, 'removed', team);
      const member = await this.users.findById(userId, manager);
      this.audit.recordIn(manager, actor, {
        event: leaving ? 'team.member_left' : 'team.member_removed',
        userId,
        teamId: team.id,
        target: { type: 'user', id: userId },
        detail: { team: team.name, member: member?.email ?? null },
      });
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
    const team = await this.access.getManageableTeam(actor, teamId);
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
      this.audit.recordIn(m, actor, {
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
    const { team, role } = await this.access.requireMembership(ownerId, teamId);
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
      this.audit.recordIn(m, actor, {
        event: 'team.ownership_transferred',
        userId: newOwnerId,
        teamId: team.id,
        target: { type: 'user', id: newOwnerId },
        detail: { team: team.name, new_owner: owner?.email ?? null },
      });
    });
    return (await this.users.findById(newOwnerId))!;
  }

  /** A member other than the owner leaves; their current team, if it was this, becomes their own. */
  leave(actor: Actor, teamId: number): Promise<void> {
    return this.removeMember(actor, teamId, accountOf(actor));
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
      this.audit.recordIn(manager, actor, {
        event: 'team.member_joined',
        teamId,
        target: { type: 'user', id: userId },
        detail: { team: team?.name ?? null, member: user?.email ?? null, role, via: 'invitation' },
      });
    }
    await this.users.setCurrentTeamIfMember(manager, userId, teamId);
  }
}
