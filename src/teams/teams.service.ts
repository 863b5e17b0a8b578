import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { Actor } from '../common/actor.js';
import { isUniqueViolation } from '../database/database-errors.js';
import { Transactions } from '../database/transactions.js';
import type { User } from '../users/user.entity.js';
import { UsersRepository } from '../users/users.repository.js';
import { ValidationError } from '../common/errors/domain.error.js';
import { toUserProfile, type UserProfile } from '../users/user.view.js';
import type { AddMemberDto } from './dto/add-member.dto.js';
import type { CreateTeamDto } from './dto/create-team.dto.js';
import type { TeamRole } from './team-member.entity.js';
import type { Team } from './team.entity.js';
import {
  AlreadyMemberError,
  MemberNotFoundError,
  NotTeamManagerError,
  NotTeamMemberError,
  OwnerCannotLeaveError,
  OwnerOnlyError,
  PersonalTeamError,
  TeamNotFoundError,
} from './teams.errors.js';
import { TeamsRepository } from './teams.repository.js';

export interface TeamMembership {
  team: Team;
  role: TeamRole;
  current: boolean;
}

export interface TeamDetails {
  team: Team;
  /** The viewer's own role. */
  role: TeamRole;
  /** `removable`: whether the viewer may remove this member (leaving is separate). */
  members: { user: UserProfile; role: TeamRole; removable: boolean }[];
}

/** Owners remove anyone but themselves; admins remove members; members remove no one. */
function mayRemove(actorRole: TeamRole, targetRole: TeamRole): boolean {
  return (
    targetRole !== 'owner' &&
    (actorRole === 'owner' || (actorRole === 'admin' && targetRole === 'member'))
  );
}

@Injectable()
export class TeamsService {
  constructor(
    private readonly teams: TeamsRepository,
    private readonly users: UsersRepository,
    private readonly transactions: Transactions,
  ) {}

  /** A user's own team, made with the user (inside the caller's transaction). */
  async createPersonalTeam(manager: EntityManager, user: User): Promise<Team> {
    const firstName = user.name.split(/\s+/)[0];
    const team = await this.teams.insertWithOwner(manager, user.id, `${firstName}'s Team`, true);
    await this.users.setCurrentTeamIfMember(manager, user.id, team.id);
    return team;
  }

  /** Creates a team owned by the user and makes it the user's current team. */
  createTeam(ownerId: number, input: CreateTeamDto): Promise<Team> {
    return this.transactions.run(async (manager) => {
      await this.users.lockForUpdate(manager, ownerId);
      const team = await this.teams.insertWithOwner(manager, ownerId, input.name, false);
      await this.users.setCurrentTeamIfMember(manager, ownerId, team.id);
      return team;
    });
  }

  async getBySlug(slug: string): Promise<Team> {
    const team = await this.teams.findBySlug(slug);
    if (!team) throw new TeamNotFoundError();
    return team;
  }

  /** Makes one of the user's teams current; a team they are not in is refused, nothing changes. */
  async switchTeam(userId: number, teamId: number): Promise<Team> {
    const switched = await this.transactions.run((m) =>
      this.users.setCurrentTeamIfMember(m, userId, teamId),
    );
    const team = switched ? await this.teams.findById(teamId) : null;
    if (!team) throw new NotTeamMemberError();
    return team;
  }

  async getCurrentTeam(user: Pick<User, 'currentTeamId'>): Promise<Team | null> {
    return user.currentTeamId === null ? null : this.teams.findById(user.currentTeamId);
  }

  async listForUser(user: Pick<User, 'id' | 'currentTeamId'>): Promise<TeamMembership[]> {
    const rows = await this.teams.findMembershipsOf(user.id);
    return rows.map((row) => ({ ...row, current: row.team.id === user.currentTeamId }));
  }

  /** A team with its members, for its members only: to anyone else it does not exist. */
  async getForMember(userId: number, teamId: number): Promise<TeamDetails> {
    const { team, role } = await this.getMembership(userId, teamId);
    const members = (await this.teams.findMembers(team.id)).map((m) => ({
      user: toUserProfile(m.user!),
      role: m.role,
      removable: m.userId !== userId && mayRemove(role, m.role),
    }));
    return { team, role, members };
  }

  async addMember(actor: Actor, teamId: number, input: AddMemberDto): Promise<User> {
    const team = await this.getManageableTeam(actor, teamId);
    if (team.personal) throw new PersonalTeamError();
    const user = await this.users.findByEmail(input.email);
    if (!user) throw new ValidationError({ email: 'No Tessera account uses that email.' });
    try {
      await this.transactions.run((m) => this.teams.insertMember(m, team.id, user.id, input.role));
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
    const leaving = actor !== 'operator' && actor.userId === userId;
    const team = leaving
      ? (await this.getMembership(userId, teamId)).team
      : await this.getManageableTeam(actor, teamId);
    if (team.personal) throw new PersonalTeamError();
    if (team.ownerId === userId) throw new OwnerCannotLeaveError();
    if (!leaving && actor !== 'operator') {
      const [own, target] = await Promise.all([
        this.teams.findForMember(team.id, actor.userId),
        this.teams.findForMember(team.id, userId),
      ]);
      if (target && own && !mayRemove(own.role, target.role)) throw new OwnerOnlyError();
    }
    await this.transactions.run(async (manager) => {
      if (!(await this.teams.deleteMember(manager, team.id, userId)))
        throw new MemberNotFoundError();
      await this.teams.resetCurrentTeam(manager, userId, team.id);
    });
  }

  private async getMembership(
    userId: number,
    teamId: number,
  ): Promise<{ team: Team; role: TeamRole }> {
    const membership = await this.teams.findForMember(teamId, userId);
    if (!membership) throw new NotTeamMemberError();
    return membership;
  }

  /** The team, if the actor may manage it: the operator always, a user as its owner or admin. */
  private async getManageableTeam(actor: Actor, teamId: number): Promise<Team> {
    if (actor === 'operator') {
      const team = await this.teams.findById(teamId);
      if (!team) throw new TeamNotFoundError();
      return team;
    }
    const { team, role } = await this.getMembership(actor.userId, teamId);
    if (role === 'member') throw new NotTeamManagerError();
    return team;
  }
}
