import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { User } from '../users/user.entity.js';
import { UsersRepository } from '../users/users.repository.js';
import { InvalidCredentialsError } from './auth.errors.js';
import { PasswordHasher } from './password-hasher.js';

@Injectable()
export class AuthService implements OnModuleInit {
  /** Verified against when the email is unknown, so both failures take as long. */
  private decoyHash = '';

  constructor(
    private readonly users: UsersRepository,
    private readonly passwords: PasswordHasher,
  ) {}

  async onModuleInit(): Promise<void> {
    this.decoyHash = await this.passwords.hash('decoy password that matches nothing');
  }

  async signIn(email: string, password: string): Promise<User> {
    const user = await this.users.findByEmail(email);
    const valid = await this.passwords.verify(user?.passwordHash ?? this.decoyHash, password);
    if (!user || !user.passwordHash || !valid) throw new InvalidCredentialsError();
    return user;
  }
}
