import { Injectable, type OnModuleInit } from '@nestjs/common';
import { AuditLog } from '../audit/audit-log.js';
import { accountOf, clientOf, type Actor } from '../common/actor.js';
import { SignInLimiter } from '../rate-limit/sign-in-limiter.js';
import { isServiceAccount, type User } from '../users/user.entity.js';
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
    private readonly audit: AuditLog,
  ) {}

  async onModuleInit(): Promise<void> {
    this.decoyHash = await this.passwords.hash('decoy password that matches nothing');
  }

  /**
   * `email` validated and normalised; the actor's address is whom the failure limits count. A
   * wrong password for an existing account goes in that account's security log (`reason` says
   * whether it was a sign-in or a password typed again); unknown addresses go nowhere.
   */
  async signIn(
    actor: Actor,
    email: string,
    password: string,
    reason: 'password' | 'password confirmation' = 'password',
  ): Promise<User> {
    const attempt = await this.limiter.reserve(
      email,
      clientOf(actor).ip ?? undefined,
      reason === 'password' ? 'sign-in' : 'sudo',
    );
    let user: User | null;
    let valid: boolean;
    try {
      user = await this.users.findByEmail(email);
      valid = await this.passwords.verify(user?.passwordHash ?? this.decoyHash, password);
    } catch (error) {
      // Not checked (the database or the hasher failed): it does not count against anyone.
      await attempt.giveBack();
      throw error;
    }
    // A service account has no password, and signs in nowhere, whatever its row holds.
    if (user && isServiceAccount(user)) user = null;
    if (!user || !user.passwordHash || !valid) {
      // The attempt stays counted: that is the failure.
      if (user) {
        this.audit.record(actor, {
          event: 'sign-in.failed',
          userId: user.id,
          detail: { reason: `wrong ${reason}` },
        });
      }
      throw new InvalidCredentialsError();
    }
    await attempt.giveBack();
    return user;
  }

  /**
   * The signed-in person types their password again (sudo mode): checked and limited as a
   * sign-in is, so a stolen session cannot guess it. `field`: the form field a wrong password
   * is reported on. Returns the password hash it was checked against.
   */
  async confirmPassword(actor: Actor, password: string, field = 'password'): Promise<string> {
    const user = await this.users.findById(accountOf(actor));
    if (!user) throw new ValidationError({ [field]: 'That is not your password.' });
    try {
      const checked = await this.signIn(actor, user.email, password, 'password confirmation');
      return checked.passwordHash!;
    } catch (error) {
      if (!(error instanceof InvalidCredentialsError)) throw error;
      throw new ValidationError({ [field]: 'That is not your password.' });
    }
  }
}
