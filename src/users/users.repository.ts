import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In, IsNull, MoreThan, Not } from 'typeorm';
import { normalizeEmail } from './email.js';
import { User } from './user.entity.js';

@Injectable()
export class UsersRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private repo(manager: EntityManager = this.dataSource.manager) {
    return manager.getRepository(User);
  }

  findById(id: number, manager?: EntityManager): Promise<User | null> {
    return this.repo(manager).findOneBy({ id });
  }

  /** The names and addresses of the accounts among `ids` that still exist (service accounts marked). */
  findNames(
    ids: number[],
  ): Promise<Pick<User, 'id' | 'name' | 'email' | 'serviceAccountTeamId'>[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.repo().find({
      select: { id: true, name: true, email: true, serviceAccountTeamId: true },
      where: { id: In(ids) },
    });
  }

  findByEmail(email: string, manager?: EntityManager): Promise<User | null> {
    return this.repo(manager).findOneBy({ email: normalizeEmail(email) });
  }

  insert(
    manager: EntityManager,
    user: Pick<User, 'name' | 'email' | 'passwordHash' | 'emailVerifiedAt'>,
  ): Promise<User> {
    const repo = this.repo(manager);
    return repo.save(
      repo.create({ ...user, email: normalizeEmail(user.email), currentTeamId: null }),
    );
  }

  /** Records that the person confirmed their address, unless they already had. */
  async markEmailVerified(manager: EntityManager, userId: number, at: Date): Promise<void> {
    await this.repo(manager).update(
      { id: userId, emailVerifiedAt: IsNull() },
      { emailVerifiedAt: at },
    );
  }

  /**
   * Disables (`at`) or enables (null) the account, only if it is not so already: one conditional
   * UPDATE, so of two operators racing one changes it. Returns whether this one did.
   */
  async setDisabled(manager: EntityManager, userId: number, at: Date | null): Promise<boolean> {
    const result = await this.repo(manager).update(
      { id: userId, disabledAt: at === null ? Not(IsNull()) : IsNull() },
      { disabledAt: at },
    );
    return (result.affected ?? 0) > 0;
  }

  /** Accounts by id, `limit` at a time after `afterId`: an operator's listing, page by page. */
  page(afterId: number, limit: number): Promise<User[]> {
    return this.repo().find({
      where: { id: MoreThan(afterId) },
      order: { id: 'ASC' },
      take: limit,
    });
  }

  async setName(manager: EntityManager, userId: number, name: string): Promise<void> {
    await this.repo(manager).update({ id: userId }, { name });
  }

  /** A new address, confirmed by the link that set it. */
  async setConfirmedEmail(
    manager: EntityManager,
    userId: number,
    email: string,
    at: Date,
  ): Promise<void> {
    await this.repo(manager).update(
      { id: userId },
      { email: normalizeEmail(email), emailVerifiedAt: at },
    );
  }

  async setPasswordHash(
    manager: EntityManager,
    userId: number,
    passwordHash: string,
  ): Promise<void> {
    await this.repo(manager).update({ id: userId }, { passwordHash });
  }

  /**
   * Replaces the password hash only while it is still `previous` (the one a password was just
   * checked against): of two changes made with one current password, one does. Whether it did.
   */
  async replacePasswordHash(
    manager: EntityManager,
    userId: number,
    previous: string,
    passwordHash: string,
  ): Promise<boolean> {
    const result = await this.repo(manager).update(
      { id: userId, passwordHash: previous },
      { passwordHash },
    );
    return (result.affected ?? 0) === 1;
  }

  /**
   * Points the user at a team, only if they belong to it: one conditional UPDATE, so a racing
   * removal can never leave a user in a team they are not a member of. Returns whether it did.
   */
  async setCurrentTeamIfMember(
    manager: EntityManager,
    userId: number,
    teamId: number,
  ): Promise<boolean> {
    const result = await this.repo(manager)
      .createQueryBuilder()
      .update()
      .set({ currentTeamId: teamId })
      .where('id = :userId', { userId })
      .andWhere(
        'EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = :teamId AND m.user_id = :userId)',
        { teamId },
      )
      .execute();
    return (result.affected ?? 0) > 0;
  }

  /**
   * Takes the user's row lock for the rest of the transaction (MySQL/MariaDB; SQLite runs one
   * write at a time anyway). A transaction that inserts rows referring to the user and then
   * updates the user would otherwise hold a shared lock from the foreign key check and wait for
   * an exclusive one: two such transactions for one user deadlock.
   */
  async lockForUpdate(manager: EntityManager, userId: number): Promise<void> {
    if (manager.connection.options.type === 'better-sqlite3') return;
    await this.repo(manager).findOne({
      select: { id: true },
      where: { id: userId },
      lock: { mode: 'pessimistic_write' },
    });
  }
}
