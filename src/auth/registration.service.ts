import { Injectable } from '@nestjs/common';
import { isUniqueViolation } from '../database/database-errors.js';
import { Transactions } from '../database/transactions.js';
import { TeamsService } from '../teams/teams.service.js';
import type { CreateUserDto } from '../users/dto/create-user.dto.js';
import type { User } from '../users/user.entity.js';
import { EmailTakenError } from '../users/users.errors.js';
import { UsersRepository } from '../users/users.repository.js';
import { PasswordHasher } from './password-hasher.js';

/** Creates accounts: the user, their personal team, their ownership of it, all or nothing. */
@Injectable()
export class RegistrationService {
  constructor(
    private readonly users: UsersRepository,
    private readonly teams: TeamsService,
    private readonly passwords: PasswordHasher,
    private readonly transactions: Transactions,
  ) {}

  async register(input: CreateUserDto): Promise<User> {
    const passwordHash = input.password ? await this.passwords.hash(input.password) : null;
    try {
      return await this.transactions.run(async (manager) => {
        const user = await this.users.insert(manager, {
          name: input.name,
          email: input.email,
          passwordHash,
        });
        const team = await this.teams.createPersonalTeam(manager, user);
        user.currentTeamId = team.id;
        return user;
      });
    } catch (error) {
      if (isUniqueViolation(error, 'email')) throw new EmailTakenError();
      throw error;
    }
  }
}
