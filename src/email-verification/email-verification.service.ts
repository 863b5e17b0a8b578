import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { OneTimeLinks } from '../one-time-links/one-time-links.service.js';
import { AccountLinkError } from '../one-time-links/one-time-links.errors.js';
import { accountOf, knownOf, type Actor } from '../common/actor.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { Transactions } from '../database/transactions.js';
import type { MailMessage } from '../mail/mail-message.js';
import { ComposesMail, Mailer } from '../mail/mailer.js';
import type { User } from '../users/user.entity.js';
import { UserNotFoundError } from '../users/users.errors.js';
import { UsersRepository } from '../users/users.repository.js';
import { EmailNotVerifiedError } from './email-verification.errors.js';
import { Clock } from '../clock/clock.js';
import { Events } from '../events/events.js';
import { AuditLog } from '../audit/audit-log.js';

declare module '../events/events.js' {
  interface DomainEvents {
    /**
     * A person confirmed their address from the link mailed to it. `joined`: the teams the
     * confirmation made them join (subscribers add to it), for the page to say so.
     */
    'address.confirmed': { actor: Actor; joined: string[] };
  }
}

export const VERIFY_EMAIL_MAIL = 'verify-email';
const LINK_HOURS = 24;

/**
 * Confirming that a person receives mail at their address: a link mailed at sign-up (and on
 * request), valid for a day and once. With EMAIL_VERIFICATION=required an account whose
 * address is not confirmed signs in but creates no API tokens.
 */
@Injectable()
export class EmailVerificationService {
  constructor(
    private readonly users: UsersRepository,
    private readonly tokens: OneTimeLinks,
    private readonly mailer: Mailer,
    private readonly transactions: Transactions,
    private readonly events: Events,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  get required(): boolean {
    return this.config.mail.verification === 'required';
  }

  /** Whether this person must still confirm their address before creating tokens. */
  isPending(user: Pick<User, 'emailVerifiedAt'>): boolean {
    return this.required && user.emailVerifiedAt === null;
  }

  /** In the transaction that creates the account: the confirmation mail, when it is required. */
  async requestFor(manager: EntityManager, user: Pick<User, 'id' | 'email'>): Promise<void> {
    if (!this.required) return;
    await this.mailer.send(manager, VERIFY_EMAIL_MAIL, user.email, { userId: user.id });
  }

  /** A new link, replacing the last one; `confirmed` when there is nothing left to confirm. */
  async resend(actor: Actor): Promise<'sent' | 'confirmed'> {
    return this.transactions.run(async (m) => {
      const user = await this.users.findById(accountOf(actor), m);
      if (!user) throw new UserNotFoundError();
      if (!this.isPending(user)) return 'confirmed';
      await this.requestFor(m, user);
      return 'sent';
    });
  }

  /**
   * From the check-your-mail page, for the address just signed up with: a new link when an
   * account waits for that address to be confirmed, else nothing (the answer is the same).
   */
  async resendTo(email: string): Promise<void> {
    if (!this.required) return;
    await this.transactions.run(async (m) => {
      const user = await this.users.findByEmail(email, m);
      if (user && this.isPending(user)) await this.requestFor(m, user);
    });
  }

  /**
   * What the link's page offers, before anything changes (mail scanners open links before people
   * do): `sign-in` for a visitor, `confirm` for the account the link was sent to, `confirmed`
   * when it was used and the address is confirmed. Anyone else hears it does not exist.
   */
  async inspect(
    actor: Actor,
    token: string,
  ): Promise<'sign-in' | 'confirm' | 'confirmed' | 'other-account'> {
    const checked = await this.tokens.check(token, 'verify_email');
    const owner = checked.token?.userId;
    const viewer = actor.kind === 'person' ? actor.userId : undefined;
    if (owner !== undefined && viewer !== undefined && viewer !== owner) {
      // Whoever opened it holds the link: it may say the link is another account's (their
      // other one, most often), and nothing of that account.
      if (!checked.ok) throw new AccountLinkError(checked.problem, 'confirmation');
      return 'other-account';
    }
    if (!checked.ok) {
      if (checked.problem === 'used' && owner !== undefined) {
        const user = await this.users.findById(owner);
        if (user?.emailVerifiedAt) return 'confirmed';
      }
      throw new AccountLinkError(checked.problem, 'confirmation');
    }
    return viewer !== undefined ? 'confirm' : 'sign-in';
  }

  /**
   * Confirms the address the link was sent to: only by the account it was sent for, signed in,
   * and once (of two confirmations at once, one wins). A link used already is fine when the
   * address is confirmed.
   */
  /** Returns the names of the teams the confirmation joined (a claimed invitation's). */
  async confirm(actor: Actor, token: string): Promise<{ joined: string[] }> {
    const userId = accountOf(actor);
    const joined: string[] = [];
    const outcome = await this.transactions.run(async (m) => {
      const checked = await this.tokens.check(token, 'verify_email', m);
      if (checked.token && checked.token.userId !== userId) return 'unknown' as const;
      const used = await this.tokens.use(m, token, 'verify_email');
      if (used.ok) {
        await this.users.markEmailVerified(m, userId, this.clock.now());
        await this.events.publish(m, 'address.confirmed', { actor, joined });
        this.audit.recordIn(m, actor, { event: 'account.email_confirmed' });
        return undefined;
      }
      return used.problem;
    });
    if (!outcome) return { joined };
    // Used by a confirmation a moment ago (another tab, say): read outside that transaction, whose
    // snapshot on MySQL may predate the other's commit.
    if (outcome === 'used' && (await this.users.findById(userId))?.emailVerifiedAt) {
      return { joined: [] };
    }
    throw new AccountLinkError(outcome, 'confirmation');
  }

  /** Whether the acting person must still confirm their address (see isPending). */
  async isPendingFor(actor: Actor): Promise<boolean> {
    if (!this.required) return false;
    const user = await this.users.findById(accountOf(actor));
    return user !== null && this.isPending(user);
  }

  /**
   * Refuses what needs a confirmed address when the person has not confirmed theirs; `before`
   * names it in the message.
   */
  async assertConfirmed(actor: Actor, before?: string): Promise<void> {
    if (!this.required) return;
    const user = knownOf(actor) ?? (await this.users.findById(accountOf(actor)));
    if (!user) throw new UserNotFoundError();
    if (this.isPending(user)) throw new EmailNotVerifiedError(before);
  }

  /** Made when sent: nothing when the address was confirmed (or changed) meanwhile. */
  @ComposesMail(VERIFY_EMAIL_MAIL)
  private async compose(
    manager: EntityManager,
    request: { to: string; params: Record<string, unknown> },
  ): Promise<MailMessage | null> {
    const user = await this.users.findById(Number(request.params.userId), manager);
    if (!user || user.emailVerifiedAt || user.email !== request.to) return null;
    const token = await this.tokens.issue(manager, user.id, 'verify_email', LINK_HOURS * 3_600_000);
    const link = `${this.config.app.publicUrl}/verify-email/${token}`;
    return {
      to: user.email,
      subject: 'Confirm your email address',
      ...this.mailer.render('verify-email', { name: user.name, link, hours: LINK_HOURS }),
    };
  }
}
