import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, Like } from 'typeorm';
import { isUniqueViolation } from '../database/database-errors.js';
import { nextFreeSlug, randomSlug, slugify } from './slug.js';
import { TeamMember, type TeamRole } from './team-member.entity.js';
import { User } from '../users/user.entity.js';
import { Team } from './team.entity.js';

const SLUG_ATTEMPTS = 5;

@Injectable()
export class TeamsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get manager(): EntityManager {
    return this.dataSource.manager;
  }

  /**
   * Inserts a team with a slug made from its name, and its owner as a member. The first try is
   * the next free `base-N`; when another request took that slug at the same moment (the unique
   * index refuses this insert), each further try adds a random suffix, so requests racing for
   * one name do not keep choosing the same next number.
   */
  async insertWithOwner(
    manager: EntityManager,
    ownerId: number,
    name: string,
    personal: boolean,
  ): Promise<Team> {
    const base = slugify(name);
    const taken = await manager
      .getRepository(Team)
      .find({ select: { slug: true }, where: [{ slug: base }, { slug: Like(`${base}-%`) }] });
    let slug = nextFreeSlug(
      base,
      taken.map((t) => t.slug),
    );
    for (let attempt = 1; ; attempt++) {
      try {
        // A savepoint, so a slug collision undoes only this insert, not the caller's work.
        const team = await manager.transaction((m) =>
          m
            .getRepository(Team)
            .save(m.getRepository(Team).create({ name, slug, ownerId, personal })),
        );
        await manager
          .getRepository(TeamMember)
          .insert({ teamId: team.id, userId: ownerId, role: 'owner' });
        return team;
      } catch (error) {
        if (!isUniqueViolation(error, 'slug') || attempt >= SLUG_ATTEMPTS) throw error;
        slug = randomSlug(base);
      }
    }
  }

  findById(id: number): Promise<Team | null> {
    return this.manager.getRepository(Team).findOneBy({ id });
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

  /** The team as seen by one of its members, with their role; null for anyone else. */
  async findForMember(
    teamId: number,
    userId: number,
  ): Promise<{ team: Team; role: TeamRole } | null> {
    const membership = await this.manager
      .getRepository(TeamMember)
      .findOne({ where: { teamId, userId }, relations: { team: true } });
    return membership ? { team: membership.team!, role: membership.role } : null;
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
}
