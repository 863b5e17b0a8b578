import { Injectable } from '@nestjs/common';
import { IsNull, type EntityManager } from 'typeorm';
import { Session } from '../auth/session.entity.js';
import { TeamMember } from '../teams/team-member.entity.js';
import { Team } from '../teams/team.entity.js';
import { PersonalAccessToken } from '../tokens/personal-access-token.entity.js';
import { User } from '../users/user.entity.js';

/** The writes that delete an account, each inside the caller's transaction. */
@Injectable()
export class AccountDeletionRepository {
  /**
   * The teams the user owns that have a member besides them, or a service account: deleting the
   * account would delete them, and a team's service accounts' tokens with it, in silence.
   */
  findOwnedSharedTeams(manager: EntityManager, userId: number): Promise<Team[]> {
    return manager
      .getRepository(Team)
      .createQueryBuilder('t')
      .where('t.owner_id = :userId', { userId })
      .andWhere(
        `(EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = t.id AND m.user_id <> :userId)
          OR EXISTS (SELECT 1 FROM users sa WHERE sa.service_account_team_id = t.id))`,
      )
      .orderBy('t.name')
      .getMany();
  }

  async revokeTokens(manager: EntityManager, userId: number, at: Date): Promise<number> {
    const result = await manager
      .getRepository(PersonalAccessToken)
      .update({ userId, revokedAt: IsNull() }, { revokedAt: at });
    return result.affected ?? 0;
  }

  async deleteSessions(manager: EntityManager, userId: number): Promise<void> {
    await manager.getRepository(Session).delete({ userId });
  }

  async deleteMemberships(manager: EntityManager, userId: number): Promise<void> {
    await manager.getRepository(TeamMember).delete({ userId });
  }

  /**
   * The teams the user owns, none of which has another member by now: the personal team, and
   * any the user made and kept to themselves.
   */
  async deleteOwnedTeams(manager: EntityManager, userId: number): Promise<void> {
    // users.current_team_id refers to teams: cleared first, so no row points at a deleted team.
    await manager.getRepository(User).update({ id: userId }, { currentTeamId: null });
    await manager.getRepository(Team).delete({ ownerId: userId });
  }

  async deleteUser(manager: EntityManager, userId: number): Promise<void> {
    await manager.getRepository(User).delete({ id: userId });
  }
}
