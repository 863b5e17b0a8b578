import { Injectable } from '@nestjs/common';
import { requireOperator, type Actor } from '../common/actor.js';
import { ValidationError } from '../common/errors/domain.error.js';
import { UserNotFoundError } from './users.errors.js';
import { UsersRepository } from './users.repository.js';
import { isServiceAccount, type User } from './user.entity.js';

@Injectable()
export class UsersService {
  constructor(private readonly users: UsersRepository) {}

  async getByEmail(email: string): Promise<User> {
    const user = await this.users.findByEmail(email);
    if (!user) throw new UserNotFoundError();
    return user;
  }

  /** A page of every account, by id after `afterId`: for the operator only. */
  allUsersPage(actor: Actor, afterId: number, limit: number): Promise<User[]> {
    requireOperator(actor);
    return this.users.page(afterId, limit);
  }

  /** A person's account by address: a service account, which acts as no person, is refused. */
  async getPersonByEmail(email: string): Promise<User> {
    const user = await this.getByEmail(email);
    if (isServiceAccount(user)) {
      throw new ValidationError({
        email: `${user.email} is a service account, which acts as no person.`,
      });
    }
    return user;
  }
}
