import { asPerson, type Actor } from '../common/actor.js';
import { AuditLog } from '../audit/audit-log.js';
import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ValidationError } from '../common/errors/domain.error.js';
import { AccountLinkError } from '../one-time-links/one-time-links.errors.js';
import { OneTimeLinks } from '../one-time-links/one-time-links.service.js';
import { PasswordHasher } from '../auth/password-hasher.js';
import { PasskeysService } from '../passkeys/passkeys.service.js';
import { SessionsRepository } from '../auth/sessions.repository.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { Transactions } from '../database/transactions.js';
import type { MailMessage } from '../mail/mail-message.js';
import { ComposesMail, Mailer } from '../mail/mailer.js';
import { AddressLimiter } from '../rate-limit/address-limiter.js';
import { isServiceAccount, type User } from '../users/user.entity.js';
import { UserNotFoundError } from '../users/users.errors.js';
import { UsersRepository } from '../users/users.repository.js';
import { Clock } from '../clock/clock.js';

export const PASSWORD_RESET_MAIL = 'password-reset';
export const PASSWORD_CHANGED_MAIL = 'password-changed';
export const RESET_LINK_MINUTES = 60;

type Request = { to: string; params: Record<string, unknown> };

/**
 * Forgotten passwords: a link by mail, valid for an hour and once, the newest replacing those
 * before it. Setting the new password signs the account out everywhere and tells its owner.
 */
@Injectable()
export class PasswordResetService {
  constructor(
    private readonly audit: AuditLog,
    private readonly users: UsersRepository,
    private readonly tokens: OneTimeLinks,
    private readonly mailer: Mailer,
    private readonly passwords: PasswordHasher,
    private readonly sessions: SessionsRepository,
    private readonly passkeys: PasskeysService,
    private readonly limiter: AddressLimiter,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  /**
   * Asks for a link to be mailed to `email` (validated, normalised). The same work whether or
   * not the address has an account: one row in the outbox, never a look at `users`. Whether
   * there is an account to reset is found when the message is made, after the answer. Past
   * the address's hourly limit nothing is sent, and the answer is still the same.
   */
  async request(email: string): Promise<void> {
    if (!(await this.limiter.allow(PASSWORD_RESET_MAIL, email))) return;
    await this.transactions.run((m) => this.mailer.send(m, PASSWORD_RESET_MAIL, email));
  }

  /** For an operator: a link that sets the account's password, to hand over instead of mailing. */
  async linkFor(email: string): Promise<{ user: User; link: string; minutes: number }> {
    return this.transactions.run(async (m) => {
      const user = await this.users.findByEmail(email, m);
      if (!user) throw new UserNotFoundError();
      if (isServiceAccount(user)) {
        throw new ValidationError({
          email: `${user.email} is a service account, which signs in with no password.`,
        });
      }
      return { user, link: await this.issueLink(m, user), minutes: RESET_LINK_MINUTES };
    });
  }

  /** Refuses, with a page that says why, a link that cannot set a password. */
  async assertUsable(token: string): Promise<void> {
    const checked = await this.tokens.check(token, 'reset_password');
    if (!checked.ok) throw new AccountLinkError(checked.problem, 'password reset');
  }

  /**
   * Sets the password the link is for, once: the account's sessions end (and every other one
   * signed in under the old password, by its credential stamp), a change of address waiting for
   * its link is cancelled (the link stops working, its mail if unsent is not sent), its
   * passkeys are removed, the
   * address counts as confirmed (the link reached it), and its owner is told by mail. A passkey
   * signs in without the password and counts as both factors: one planted by whoever held the
   * account before (someone who signed up with the owner's address, or stole a session) would
   * otherwise outlast the owner taking it back.
   */
  async reset(actor: Actor, token: string, password: string): Promise<void> {
    // Checked before hashing, so that a bad link costs no hashing time.
    await this.assertUsable(token);
    const passwordHash = await this.passwords.hash(password);
    await this.transactions.run(async (m) => {
      const used = await this.tokens.use(m, token, 'reset_password');
      if (!used.ok) throw new AccountLinkError(used.problem, 'password reset');
      const userId = used.token.userId;
      const user = await this.users.findById(userId, m);
      if (!user) throw new UserNotFoundError();
      // No link is ever issued for a service account; one planted for it sets nothing.
      if (isServiceAccount(user)) throw new AccountLinkError('unknown', 'password reset');
      await this.users.setPasswordHash(m, userId, passwordHash);
      // Resets asked for meanwhile, mailed or not yet, would undo this one.
      await this.mailer.withdraw(m, PASSWORD_RESET_MAIL, user.email);
      await this.tokens.cancel(m, userId, 'reset_password');
      // A change of address asked for by whoever held the account before would hand it to them.
      await this.tokens.cancel(m, userId, 'change_email');
      await this.users.markEmailVerified(m, userId, this.clock.now());
      await this.sessions.deleteForUser(m, userId);
      // Whoever holds the link acts for the account it was sent for.
      const owner = asPerson(actor, userId);
      const passkeysRemoved = await this.passkeys.removeAll(m, owner, 'password reset');
      await this.mailer.send(m, PASSWORD_CHANGED_MAIL, user.email, { userId, passkeysRemoved });
      this.audit.recordIn(m, owner, {
        event: 'account.password_reset',
        detail: { via: 'mailed link' },
      });
    });
  }

  private async issueLink(manager: EntityManager, user: Pick<User, 'id'>): Promise<string> {
    const ttl = RESET_LINK_MINUTES * 60_000;
    const token = await this.tokens.issue(manager, user.id, 'reset_password', ttl);
    return `${this.config.app.publicUrl}/reset-password/${token}`;
  }

  /** Nothing to send for an address with no account. */
  @ComposesMail(PASSWORD_RESET_MAIL)
  private async composeLink(m: EntityManager, request: Request): Promise<MailMessage | null> {
    const user = await this.users.findByEmail(request.to, m);
    if (!user || isServiceAccount(user)) return null;
    const link = await this.issueLink(m, user);
    return {
      to: user.email,
      subject: 'Reset your Tessera password',
      ...this.mailer.render('password-reset', {
        name: user.name,
        link,
        minutes: RESET_LINK_MINUTES,
      }),
    };
  }

  @ComposesMail(PASSWORD_CHANGED_MAIL)
  private async composeNotice(m: EntityManager, request: Request): Promise<MailMessage | null> {
    const user = await this.users.findById(Number(request.params.userId), m);
    if (!user || user.email !== request.to) return null;
    return {
      to: user.email,
      subject: 'Your Tessera password was changed',
      ...this.mailer.render('password-changed', {
        name: user.name,
        // Changed on the settings page: the session it was changed in stays signed in.
        everywhere: request.params.keptSession !== 1,
        passkeysRemoved: passkeysRemovedSentence(Number(request.params.passkeysRemoved ?? 0)),
        securityUrl: `${this.config.app.publicUrl}/settings/security`,
        resetUrl: `${this.config.app.publicUrl}/forgot-password`,
      }),
    };
  }
}

/** What the notice says of the passkeys a reset removed; nothing when there were none. */
function passkeysRemovedSentence(count: number): string {
  if (count <= 0) return '';
  return count === 1 ? 'Its passkey was removed too' : `Its ${count} passkeys were removed too`;
}
