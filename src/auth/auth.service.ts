import { Injectable, type OnModuleInit } from '@nestjs/common';
import { SignInLimiter } from '../rate-limit/sign-in-limiter.js';
import type { User } from '../users/user.entity.js';
import { UsersRepository } from '../users/users.repository.js';
import { ValidationError } from '../common/errors/domain.error.js';
import { InvalidCredentialsError } from './auth.errors.js';
import { PasswordHasher } from './password-hasher.js';

@Injectable()
export class AuthService implements OnModuleInit {
  /** Verified against when the email is unknown, so both failures take as long. */
  private decoyHash = '';

  constructor(
    private readonly users: UsersRepository,
    private readonly passwords: PasswordHasher,
    private readonly limiter: SignInLimiter,
  ) {}

  async onModuleInit(): Promise<void> {
    this.decoyHash = await this.passwords.hash('decoy password that matches nothing');
  }

  /** `email` validated and normalised; `clientIp` is whom the failure limits count. */
  async signIn(email: string, password: string, clientIp: string | undefined): Promise<User> {
    await this.limiter.assertAllowed(email, clientIp);
    const user = await this.users.findByEmail(email);
    const valid = await this.passwords.verify(user?.passwordHash ?? this.decoyHash, password);
    if (!user || !user.passwordHash || !valid) {
      await this.limiter.recordFailure(email, clientIp);
      throw new InvalidCredentialsError();
    }
    return user;
  }

  /**
   * The signed-in person types their password again (sudo mode): checked and limited as a
   * sign-in is, so a stolen session cannot guess it. `field`: the form field a wrong password
   * is reported on.
   */
  async confirmPassword(
    user: User,
    password: string,
    clientIp: string | undefined,
    field = 'password',
  ): Promise<void> {
    try {
      await this.signIn(user.email, password, clientIp);
    } catch (error) {
      if (!(error instanceof InvalidCredentialsError)) throw error;
      throw new ValidationError({ [field]: 'That is not your password.' });
    }
  }
}
