import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { Actor } from '../common/actor.js';
import { isUniqueViolation } from '../database/database-errors.js';
import { Transactions } from '../database/transactions.js';
import type { User } from '../users/user.entity.js';
import { UsersRepository } from '../users/users.repository.js';
import { UserNotFoundError } from '../users/users.errors.js';
import type { AddMemberDto } from './dto/add-member.dto.js';
import type { CreateTeamDto } from './dto/create-team.dto.js';
import type { Team } from './team.entity.js';
import {
  AlreadyMemberError,
  NotTeamManagerError,
  NotTeamMemberError,
  PersonalTeamError,
  TeamNotFoundError,
} from './teams.errors.js';
import { TeamsRepository } from './teams.repository.js';

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
  async switchTeam(userId: number, teamId: number): Promise<void> {
    const switched = await this.transactions.run((m) =>
      this.users.setCurrentTeamIfMember(m, userId, teamId),
    );
    if (!switched) throw new NotTeamMemberError();
  }

  async addMember(actor: Actor, teamId: number, input: AddMemberDto): Promise<User> {
    const team = await this.getManageableTeam(actor, teamId);
    if (team.personal) throw new PersonalTeamError();
    const user = await this.users.findByEmail(input.email);
    if (!user) throw new UserNotFoundError();
    try {
      await this.transactions.run((m) => this.teams.insertMember(m, team.id, user.id, input.role));
    } catch (error) {
      if (isUniqueViolation(error)) throw new AlreadyMemberError();
      throw error;
    }
    return user;
  }

  /** The team, if the actor may manage it: the operator always, a user as its owner or admin. */
  private async getManageableTeam(actor: Actor, teamId: number): Promise<Team> {
    const team = await this.teams.findById(teamId);
    if (actor === 'operator') {
      if (!team) throw new TeamNotFoundError();
      return team;
    }
    const membership = team ? await this.teams.findMembership(team.id, actor.userId) : null;
    if (!team || !membership) throw new NotTeamMemberError();
    if (membership.role === 'member') throw new NotTeamManagerError();
    return team;
  }
}
