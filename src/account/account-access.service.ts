import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log.js';
import { SessionsRepository } from '../auth/sessions.repository.js';
import { Clock } from '../clock/clock.js';
import { accountOf, requireOperator, type Actor } from '../common/actor.js';
import { Transactions } from '../database/transactions.js';
import { PasskeysService } from '../passkeys/passkeys.service.js';
import { SecurityNotices } from '../security-notices/security-notices.js';
import { TwoFactorService } from '../two-factor/two-factor.service.js';
import type { User } from '../users/user.entity.js';
import { UserNotFoundError } from '../users/users.errors.js';
import { UsersRepository } from '../users/users.repository.js';
import { AccountStateUnchangedError, NoSecondFactorError } from './account.errors.js';

/** What an operator's reset of two-factor sign-in removed. */
export interface TwoFactorReset {
  user: User;
  /** The authenticator app's secret and the recovery codes went. */
  totp: boolean;
  passkeys: number;
  sessions: number;
}

const RESET_BECAUSE = 'two-factor sign-in reset by an operator';

/**
 * What an operator does to a person's access (the command line): disable the account and enable
 * it again, and reset two-factor sign-in for someone locked out. Each happens in one
 * transaction with its mail to the person (through the outbox) and its security log events,
 * for the operator acting on that account (`Actors.operator(userId)`).
 */
@Injectable()
export class AccountAccessService {
  constructor(
    private readonly users: UsersRepository,
    private readonly sessions: SessionsRepository,
    private readonly twoFactor: TwoFactorService,
    private readonly passkeys: PasskeysService,
    private readonly notices: SecurityNotices,
    private readonly audit: AuditLog,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
  ) {}

  /**
   * Disables the account: it cannot sign in, its sessions end now (and any a request in flight
   * writes back is refused on its next page), and its tokens are refused from the next API
   * request on every instance (the authentication query reads `disabled_at`). Its tokens are
   * kept, not revoked, so enabling the account again gives them back. Returns how many sessions
   * ended.
   */
  async disable(actor: Actor): Promise<{ user: User; sessions: number }> {
    requireOperator(actor);
    return this.transactions.run(async (m) => {
      const user = await this.lockedAccount(m, accountOf(actor));
      if (!(await this.users.setDisabled(m, user.id, this.clock.now()))) {
        throw new AccountStateUnchangedError(user.email, true);
      }
      const sessions = await this.sessions.deleteForUser(m, user.id);
      await this.notices.send(m, user.id, 'account-disabled');
      this.audit.recordIn(m, actor, {
        event: 'account.disabled',
        userId: user.id,
        detail: { sessions_ended: sessions },
      });
      return { user, sessions };
    });
  }

  /** Enables a disabled account again: it signs in, and its tokens work as before. */
  async enable(actor: Actor): Promise<User> {
    requireOperator(actor);
    return this.transactions.run(async (m) => {
      const user = await this.lockedAccount(m, accountOf(actor));
      if (!(await this.users.setDisabled(m, user.id, null))) {
        throw new AccountStateUnchangedError(user.email, false);
      }
      await this.notices.send(m, user.id, 'account-enabled');
      this.audit.recordIn(m, actor, { event: 'account.enabled', userId: user.id });
      return user;
    });
  }

  /**
   * For a person locked out (device and recovery codes lost): removes every second factor, the
   * authenticator app's secret, the recovery codes and the passkeys (a passkey signs in alone,
   * and one on the lost device would still work), and ends every session, so the password alone
   * signs in and the person sets two-factor sign-in up again. API tokens stay, as after a
   * password reset. Refused when there is nothing to remove.
   */
  async resetTwoFactor(actor: Actor): Promise<TwoFactorReset> {
    requireOperator(actor);
    return this.transactions.run(async (m) => {
      const user = await this.lockedAccount(m, accountOf(actor));
      const totp = await this.twoFactor.removeAll(m, actor, RESET_BECAUSE);
      const passkeys = await this.passkeys.removeAll(m, actor, RESET_BECAUSE);
      if (!totp && passkeys === 0) throw new NoSecondFactorError(user.email);
      const sessions = await this.sessions.deleteForUser(m, user.id);
      const removed = [
        ...(totp ? ['the authenticator app and the recovery codes'] : []),
        ...(passkeys > 0 ? [`${passkeys} passkey${passkeys === 1 ? '' : 's'}`] : []),
      ];
      await this.notices.send(m, user.id, 'two-factor-reset', { detail: removed.join(' and ') });
      this.audit.recordIn(m, actor, {
        event: 'account.two_factor_reset',
        userId: user.id,
        detail: { authenticator_app: totp, passkeys, sessions_ended: sessions },
      });
      return { user, totp, passkeys, sessions };
    });
  }

  /** The account the operator acts on, under its row lock. */
  private async lockedAccount(manager: EntityManager, id: number): Promise<User> {
    await this.users.lockForUpdate(manager, id);
    const user = await this.users.findById(id, manager);
    if (!user) throw new UserNotFoundError();
    return user;
  }
}
