import { AuditLog } from '../audit/audit-log.js';
import { SignInRequiredError } from '../auth/auth.errors.js';
import { SessionsRepository } from '../auth/sessions.repository.js';
import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AccountLinkError } from '../one-time-links/one-time-links.errors.js';
import { OneTimeLinks } from '../one-time-links/one-time-links.service.js';
import { accountOf, type Actor } from '../common/actor.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { isUniqueViolation } from '../common/errors/database-errors.js';
import { Transactions } from '../database/transactions.js';
import type { MailMessage } from '../mail/mail-message.js';
import { ComposesMail, Mailer } from '../mail/mailer.js';
import { AccountLimiter } from '../rate-limit/account-limiter.js';
import { AddressLimiter } from '../rate-limit/address-limiter.js';
import { SecurityNotices } from '../security-notices/security-notices.js';
import { EmailTakenError, UserNotFoundError } from '../users/users.errors.js';
import { UsersRepository } from '../users/users.repository.js';
import { Clock } from '../clock/clock.js';
import { PASSWORD_RESET_MAIL } from '../password-reset/password-reset.service.js';

export const CHANGE_EMAIL_MAIL = 'change-email';
export const CHANGE_EMAIL_LINK_HOURS = 24;

/** A new address asked for, until its link is followed, expires or the change is cancelled. */
export interface PendingEmailChange {
  email: string;
  expiresAt: Date;
}

/**
 * The person's name and address. A new address takes effect only when the link mailed to it is
 * followed by the account it was asked for; the old address is then told.
 */
@Injectable()
export class ProfileService {
  constructor(
    private readonly audit: AuditLog,
    private readonly users: UsersRepository,
    private readonly tokens: OneTimeLinks,
    private readonly mailer: Mailer,
    private readonly notices: SecurityNotices,
    private readonly limiter: AddressLimiter,
    private readonly accountLimiter: AccountLimiter,
    private readonly clock: Clock,
    private readonly transactions: Transactions,
    private readonly sessions: SessionsRepository,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  /**
   * Renames at once; a different `email` (validated, normalised) is only asked for: a link goes
   * to it. Whether another account has that address shows nowhere: the answer is the same, and
   * the composer sends nothing then. An account asks for a new address at most
   * RATE_LIMIT_EMAIL_CHANGE_PER_HOUR times an hour (each mails a stranger's address, with the
   * account's name in it); past that the whole change is refused, the name included. Returns
   * whether a change of address was asked for.
   */
  async update(actor: Actor, input: { name: string; email: string }): Promise<boolean> {
    const user = await this.users.findById(accountOf(actor));
    if (!user) throw new UserNotFoundError();
    const newEmail = input.email !== user.email;
    if (newEmail) {
      await this.accountLimiter.consume('email-change', user.id, 'asked to change your address');
    }
    const mail = newEmail && (await this.limiter.allow(CHANGE_EMAIL_MAIL, input.email));
    await this.transactions.run(async (m) => {
      if (input.name !== user.name) await this.users.setName(m, user.id, input.name);
      if (mail) await this.askForLink(m, actor, user.id, input.email);
      if (newEmail) {
        this.audit.recordIn(m, actor, {
          event: 'account.email_change_requested',
          detail: { to: input.email },
        });
      }
    });
    return newEmail;
  }

  /** The change of address waiting for its link to be followed, if one is. */
  async pendingChange(actor: Actor): Promise<PendingEmailChange | null> {
    const link = await this.tokens.pending(accountOf(actor), 'change_email');
    return link?.email ? { email: link.email, expiresAt: link.expiresAt } : null;
  }

  /**
   * Mails the waiting change's link again (a new link: the one before stops working), within the
   * same hourly limit as asking for a change; false when no change waits.
   */
  async resendChange(actor: Actor): Promise<boolean> {
    const userId = accountOf(actor);
    const pending = await this.pendingChange(actor);
    if (!pending) return false;
    await this.accountLimiter.consume('email-change', userId, 'asked to change your address');
    if (!(await this.limiter.allow(CHANGE_EMAIL_MAIL, pending.email))) return true;
    await this.transactions.run(async (m) => {
      await this.askForLink(m, actor, userId, pending.email);
      this.audit.recordIn(m, actor, {
        event: 'account.email_change_requested',
        detail: { to: pending.email, again: true },
      });
    });
    return true;
  }

  /**
   * Cancels the waiting change: its link stops working. Once: of two cancellations at once, the
   * one that deleted the link records it and answers true; the other finds nothing waiting.
   */
  async cancelChange(actor: Actor): Promise<boolean> {
    const userId = accountOf(actor);
    return this.transactions.run(async (m) => {
      if (!(await this.tokens.cancelPending(m, userId, 'change_email'))) return false;
      this.audit.recordIn(m, actor, { event: 'account.email_change_cancelled' });
      return true;
    });
  }

  /**
   * What a link mailed for a change offers, for its page, while it can still be used: to the
   * account that asked for it, the address it would set; to another account signed in, only that
   * it is another account's (their other one, most often), and nothing of that account. Changes
   * nothing.
   */
  async pendingEmail(
    actor: Actor,
    token: string,
  ): Promise<{ email: string } | { otherAccount: true }> {
    const checked = await this.tokens.check(token, 'change_email');
    if (!checked.ok) throw new AccountLinkError(checked.problem, 'email change');
    if (!checked.token.email) throw new AccountLinkError('unknown', 'email change');
    if (checked.token.userId !== accountOf(actor)) return { otherAccount: true };
    return { email: checked.token.email };
  }

  /**
   * Confirms the change from the link's page (a POST: opening the link changes nothing): only
   * the account that asked for it can, once, and it sets the address the link was sent to,
   * confirmed.
   */
  async confirmEmail(actor: Actor, token: string): Promise<void> {
    const userId = accountOf(actor);
    try {
      await this.transactions.run(async (m) => {
        const checked = await this.tokens.check(token, 'change_email', m);
        // Another account's link says nothing about it: as if it did not exist.
        if (checked.token && checked.token.userId !== userId) {
          throw new AccountLinkError('unknown', 'email change');
        }
        const used = await this.tokens.use(m, token, 'change_email');
        if (!used.ok) throw new AccountLinkError(used.problem, 'email change');
        const user = await this.users.findById(userId, m);
        const email = used.token.email;
        if (!user || !email) throw new UserNotFoundError();
        if (email === user.email) return;
        if (await this.users.findByEmail(email, m)) throw new EmailTakenError();
        await this.users.setConfirmedEmail(m, user.id, email, this.clock.now());
        // Reset links mailed to the old address stop working, and those not mailed yet are not
        // sent: it no longer speaks for the account.
        await this.mailer.withdraw(m, PASSWORD_RESET_MAIL, user.email);
        await this.tokens.cancel(m, user.id, 'reset_password');
        await this.notices.send(m, user.id, 'email-changed', { to: user.email });
        this.audit.recordIn(m, actor, {
          event: 'account.email_changed',
          detail: { from: user.email, to: email },
        });
      });
    } catch (error) {
      // Another account took the address after the link was sent.
      if (isUniqueViolation(error, 'email')) throw new EmailTakenError();
      throw error;
    }
  }

  /**
   * The change waits from now (its link's row, replacing any before it), and a message carries
   * its link when it is sent: cancelling the change, or asking again, stops that message. Asked
   * from a session that has ended (a reset, signing out), nothing is asked.
   */
  private async askForLink(
    m: EntityManager,
    actor: Actor,
    userId: number,
    email: string,
  ): Promise<void> {
    // A reset that ended the asking session meanwhile cancels waiting changes: none follows it.
    await this.users.lockForUpdate(m, userId);
    if (await this.sessions.hasEnded(m, actor, this.clock.now())) throw new SignInRequiredError();
    const ttl = CHANGE_EMAIL_LINK_HOURS * 3_600_000;
    const linkId = await this.tokens.reserve(m, userId, 'change_email', ttl, email);
    await this.mailer.send(m, CHANGE_EMAIL_MAIL, email, { userId, linkId });
  }

  /**
   * Nothing to send once the change was cancelled, asked for again, confirmed or has expired,
   * when the account is gone, or when another account has the address by now. A message asked
   * for before links were held from the start names no link: it is not sent.
   */
  @ComposesMail(CHANGE_EMAIL_MAIL)
  private async compose(
    m: EntityManager,
    request: { to: string; params: Record<string, unknown> },
  ): Promise<MailMessage | null> {
    const userId = Number(request.params.userId);
    const linkId = Number(request.params.linkId);
    if (!Number.isSafeInteger(linkId) || (await this.users.findByEmail(request.to, m))) return null;
    const reissued = await this.tokens.reissue(m, linkId, 'change_email');
    if (!reissued || reissued.link.userId !== userId || reissued.link.email !== request.to) {
      return null;
    }
    const hoursLeft = (reissued.link.expiresAt.getTime() - this.clock.nowMs()) / 3_600_000;
    return {
      to: request.to,
      subject: 'Confirm your new email address',
      // No word of the account's own (its name) goes to an address that has proven nothing.
      ...this.mailer.render('change-email', {
        link: `${this.config.app.publicUrl}/settings/profile/email/${reissued.token}`,
        hours: Math.max(1, Math.round(hoursLeft)),
      }),
    };
  }
}
