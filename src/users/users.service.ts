import { Injectable } from '@nestjs/common';
import { requireOperator, type Actor } from '../common/actor.js';
import { UserNotFoundError } from './users.errors.js';
import { UsersRepository } from './users.repository.js';
import type { User } from './user.entity.js';

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
}
