import { AuditLog } from '../audit/audit-log.js';
import { Injectable } from '@nestjs/common';
import { OneTimeLinks } from '../one-time-links/one-time-links.service.js';
import { AuthService } from '../auth/auth.service.js';
import { credentialStamp } from '../auth/session-digests.js';
import { PasswordHasher } from '../auth/password-hasher.js';
import { SessionsRepository } from '../auth/sessions.repository.js';
import { Transactions } from '../database/transactions.js';
import {
  PASSWORD_CHANGED_MAIL,
  PASSWORD_RESET_MAIL,
} from '../password-reset/password-reset.service.js';
import { UserNotFoundError } from '../users/users.errors.js';
import { accountOf, type Actor } from '../common/actor.js';
import { UsersRepository } from '../users/users.repository.js';
import { Mailer } from '../mail/mailer.js';
import { checkedTogether, ValidationError } from '../common/errors/domain.error.js';
import { validateInput } from '../common/validation/validate-input.js';
import { NewPasswordFields } from './new-password.fields.js';

const CHANGED_MEANWHILE =
  'Your password was changed meanwhile, so that is no longer your password. Nothing was changed.';

/** A signed-in person changing their password, knowing the current one. */
@Injectable()
export class PasswordChangeService {
  constructor(
    private readonly audit: AuditLog,
    private readonly auth: AuthService,
    private readonly passwords: PasswordHasher,
    private readonly users: UsersRepository,
    private readonly sessions: SessionsRepository,
    private readonly links: OneTimeLinks,
    private readonly mailer: Mailer,
    private readonly transactions: Transactions,
  ) {}

  /**
   * Checks the current password (limited as a sign-in is), sets the new one, signs the account
   * out of every session but `keepSessionId`, cancels the reset links mailed before (one could
   * otherwise undo the change) and tells its owner by mail. Returns the new
   * credential stamp, for the kept session: every other one no longer matches it.
   */
  async change(
    actor: Actor,
    input: { current: string; password: string; confirmation: string },
    keepSessionId: string,
  ): Promise<string> {
    // Every mistake at once: the current password, and the new one's rules.
    const [checkedHash] = await checkedTogether(
      () => this.auth.confirmPassword(actor, input.current, 'current_password'),
      () =>
        validateInput(NewPasswordFields, {
          password: input.password,
          password_confirmation: input.confirmation,
        }),
    );
    const passwordHash = await this.passwords.hash(input.password);
    await this.transactions.run(async (m) => {
      const user = await this.users.findById(accountOf(actor), m);
      if (!user) throw new UserNotFoundError();
      // Changed since the current password was checked (another change made with it, a reset):
      // that password is no longer the current one.
      if (!(await this.users.replacePasswordHash(m, user.id, checkedHash, passwordHash))) {
        throw new ValidationError({ current_password: CHANGED_MEANWHILE });
      }
      await this.sessions.deleteOthersForUser(m, user.id, keepSessionId);
      await this.sessions.restamp(m, keepSessionId, credentialStamp(passwordHash));
      // A reset asked for before, mailed or still waiting to be, could otherwise undo the change.
      await this.mailer.withdraw(m, PASSWORD_RESET_MAIL, user.email);
      await this.links.cancel(m, user.id, 'reset_password');
      await this.mailer.send(m, PASSWORD_CHANGED_MAIL, user.email, {
        userId: user.id,
        keptSession: 1,
      });
      this.audit.recordIn(m, actor, { event: 'account.password_changed' });
    });
    return credentialStamp(passwordHash);
  }
}
