import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { toDate } from '../database/plain-rows.js';
import { slugify } from '../teams/slug.js';
import { releaseTeamCount, reserveTeamCount } from '../teams/team-counts.js';
import { PersonalAccessToken } from '../tokens/personal-access-token.entity.js';
import { User } from '../users/user.entity.js';

/** A team's service account as its list shows it. */
export interface ServiceAccountRow {
  id: number;
  name: string;
  description: string | null;
  email: string;
  createdAt: Date;
  /** Its tokens that are neither revoked nor expired. */
  activeTokens: number;
  /** The latest use of any of its tokens (recorded at most once a minute). */
  lastUsedAt: Date | null;
}

/**
 * A service account's address: under the reserved `.invalid` domain (RFC 2606), naming its team
 * by id (a slug changes with the name), with its own name and id before the `@`.
 */
export function serviceAccountAddress(account: { id: number; name: string }, teamId: number) {
  const local = slugify(account.name).replace(/^team$/, 'service-account');
  return `${local}-${account.id}@team-${teamId}.service-accounts.invalid`;
}

/** Service accounts: rows of `users` that a team owns, and the team's count of them. */
@Injectable()
export class ServiceAccountsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Counts one more service account for the team, while it has fewer than `limit`. */
  reserve(manager: EntityManager, teamId: number, limit: number): Promise<boolean> {
    return reserveTeamCount(manager, teamId, 'serviceAccounts', limit);
  }

  /** Counts one service account of the team less (it was deleted). */
  release(manager: EntityManager, teamId: number): Promise<void> {
    return releaseTeamCount(manager, teamId, 'serviceAccounts');
  }

  /**
   * Whether the team has a service account of that name, whatever its case or Unicode form
   * ("Deploy" and "deploy" would show as one in its audit log): the names are compared here,
   * alike on every database, and there are at most SERVICE_ACCOUNTS_PER_TEAM of them.
   */
  async nameTaken(manager: EntityManager, teamId: number, name: string): Promise<boolean> {
    const accounts = await manager
      .getRepository(User)
      .find({ select: { id: true, name: true }, where: { serviceAccountTeamId: teamId } });
    const key = nameKey(name);
    return accounts.some((account) => nameKey(account.name) === key);
  }

  /**
   * A new service account of the team: no password, no confirmed address, no current team; its
   * address is made from its id once it has one.
   */
  async insert(
    manager: EntityManager,
    teamId: number,
    input: { name: string; description: string | null },
  ): Promise<User> {
    const users = manager.getRepository(User);
    const { identifiers } = await users.insert({
      name: input.name,
      description: input.description,
      // Unique until the next statement gives it its address.
      email: `pending-${randomUUID()}@service-accounts.invalid`,
      passwordHash: null,
      emailVerifiedAt: null,
      currentTeamId: null,
      serviceAccountTeamId: teamId,
    });
    const id = Number(identifiers[0].id);
    await users.update({ id }, { email: serviceAccountAddress({ id, name: input.name }, teamId) });
    return users.findOneByOrFail({ id });
  }

  /** The team that owns the service account; null when there is no such service account. */
  async teamOf(accountId: number): Promise<number | null> {
    const account = await this.dataSource.manager.getRepository(User).findOne({
      select: { id: true, serviceAccountTeamId: true },
      where: { id: accountId },
    });
    return account?.serviceAccountTeamId ?? null;
  }

  /** One of the team's service accounts; any other id is none. */
  findInTeam(teamId: number, accountId: number, manager?: EntityManager): Promise<User | null> {
    return (manager ?? this.dataSource.manager)
      .getRepository(User)
      .findOneBy({ id: accountId, serviceAccountTeamId: teamId });
  }

  /**
   * Deletes the team's service account, and with it (ON DELETE CASCADE) its tokens, their pins
   * and usage: the next request of any of them, on any instance, finds no token. Whether this
   * call deleted it (of two at once, one does).
   */
  async delete(manager: EntityManager, teamId: number, accountId: number): Promise<boolean> {
    const result = await manager
      .getRepository(User)
      .delete({ id: accountId, serviceAccountTeamId: teamId });
    return result.affected === 1;
  }

  /** The team's service accounts by name, with how many active tokens each has. */
  async findForTeam(teamId: number, now: Date): Promise<ServiceAccountRow[]> {
    const rows = await this.dataSource.manager
      .getRepository(User)
      .createQueryBuilder('u')
      .leftJoin(
        PersonalAccessToken,
        't',
        't.user_id = u.id AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > :now)',
        { now },
      )
      .select([
        'u.id AS id',
        'u.name AS name',
        'u.description AS description',
        'u.email AS email',
        'u.created_at AS created_at',
      ])
      .addSelect('COUNT(t.id)', 'active_tokens')
      .addSelect('MAX(t.last_used_at)', 'last_used_at')
      .where('u.service_account_team_id = :teamId', { teamId })
      .groupBy('u.id')
      .addGroupBy('u.name')
      .addGroupBy('u.description')
      .addGroupBy('u.email')
      .addGroupBy('u.created_at')
      .orderBy('u.name', 'ASC')
      .addOrderBy('u.id', 'ASC')
      .getRawMany<Record<string, unknown>>();
    return rows.map((r) => ({
      id: Number(r.id),
      name: String(r.name),
      description: (r.description as string | null) ?? null,
      email: String(r.email),
      createdAt: toDate(r.created_at as string)!,
      activeTokens: Number(r.active_tokens),
      lastUsedAt: toDate(r.last_used_at as string | null),
    }));
  }
}

/** A name as people read it: its compatibility form, case folded. */
const nameKey = (name: string): string => name.normalize('NFKC').toLowerCase();
