import { Actors, asPerson, type Actor } from '../common/actor.js';
import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { isUniqueViolation } from '../common/errors/database-errors.js';
import { Transactions } from '../database/transactions.js';
import { EmailVerificationService } from '../email-verification/email-verification.service.js';
import type { MailMessage } from '../mail/mail-message.js';
import { ComposesMail, Mailer } from '../mail/mailer.js';
import { AddressLimiter } from '../rate-limit/address-limiter.js';
import { TeamsService } from '../teams/teams.service.js';
import type { CreateUserDto } from '../users/dto/create-user.dto.js';
import type { User } from '../users/user.entity.js';
import { EmailTakenError } from '../users/users.errors.js';
import { UsersRepository } from '../users/users.repository.js';
import { PasswordHasher } from '../auth/password-hasher.js';
import { Clock } from '../clock/clock.js';
import { Events } from '../events/events.js';
import { AuditLog } from '../audit/audit-log.js';

export const REGISTRATION_ATTEMPT_MAIL = 'registration-attempt';

/** Sign-up as the page posts it: every field required. */
export interface Registration {
  name: string;
  email: string;
  password: string;
  /** The token of the invitation whose link the person registered from, if any. */
  invitation?: string;
}

declare module '../events/events.js' {
  interface DomainEvents {
    /** An account was created from the sign-up page (`invitation`: the link it came from). */
    'account.registered': { actor: Actor; user: User; invitation?: string };
  }
}

/** Creates accounts: the user, their personal team, their ownership of it, all or nothing. */
@Injectable()
export class RegistrationService {
  constructor(
    private readonly users: UsersRepository,
    private readonly teams: TeamsService,
    private readonly passwords: PasswordHasher,
    private readonly transactions: Transactions,
    private readonly verification: EmailVerificationService,
    private readonly mailer: Mailer,
    private readonly limiter: AddressLimiter,
    private readonly events: Events,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  /**
   * Sign-up from the pages, answered the same whether or not the address has an account: a new
   * address gets its account and the confirmation mail; an address taken already gets a notice
   * to its owner instead (at most RATE_LIMIT_MAIL_PER_ADDRESS_PER_HOUR an hour). Both hash the
   * password first, the slow part, so neither answers noticeably sooner.
   */
  async register(actor: Actor, input: Registration): Promise<void> {
    const passwordHash = await this.passwords.hash(input.password);
    const mayNotify = await this.limiter.allow(REGISTRATION_ATTEMPT_MAIL, input.email);
    const notifyOwner = async (m: EntityManager, owner: User) => {
      if (mayNotify) await this.notifyOwner(m, owner);
    };
    try {
      await this.transactions.run(async (m) => {
        const owner = await this.users.findByEmail(input.email, m);
        if (owner) return notifyOwner(m, owner);
        const user = await this.insertAccount(m, actor, 'sign-up', {
          name: input.name,
          email: input.email,
          passwordHash,
          emailVerifiedAt: null,
        });
        await this.verification.requestFor(m, user);
        await this.events.publish(m, 'account.registered', {
          actor: asPerson(actor, user.id),
          user,
          invitation: input.invitation,
        });
      });
    } catch (error) {
      if (!isUniqueViolation(error, 'email')) throw error;
      // Someone registered the address at this very moment: answered like any address taken.
      await this.transactions.run(async (m) => {
        const owner = await this.users.findByEmail(input.email, m);
        if (owner) await notifyOwner(m, owner);
      });
    }
  }

  /**
   * An account made by an operator (or a test), whose address counts as confirmed: the operator
   * vouches for it. Without a password the account signs in once a password is set through a
   * reset link.
   */
  async createAccount(input: CreateUserDto, options: { verified: boolean }): Promise<User> {
    const passwordHash = input.password ? await this.passwords.hash(input.password) : null;
    try {
      return await this.transactions.run((m) =>
        this.insertAccount(m, Actors.operator(), 'command line', {
          name: input.name,
          email: input.email,
          passwordHash,
          emailVerifiedAt: options.verified ? this.clock.now() : null,
        }),
      );
    } catch (error) {
      if (isUniqueViolation(error, 'email')) throw new EmailTakenError();
      throw error;
    }
  }

  /** `actor` made it: a visitor signing up (who becomes the account), or an operator. */
  private async insertAccount(
    manager: EntityManager,
    actor: Actor,
    via: 'sign-up' | 'command line',
    fields: Pick<User, 'name' | 'email' | 'passwordHash' | 'emailVerifiedAt'>,
  ): Promise<User> {
    const user = await this.users.insert(manager, fields);
    const team = await this.teams.createPersonalTeam(manager, user);
    user.currentTeamId = team.id;
    const by = actor.kind === 'operator' ? Actors.operator(user.id) : asPerson(actor, user.id);
    this.audit.recordIn(manager, by, {
      event: 'account.created',
      userId: user.id,
      detail: { via, address_confirmed: fields.emailVerifiedAt !== null },
    });
    return user;
  }

  private async notifyOwner(manager: EntityManager, owner: User): Promise<void> {
    await this.mailer.send(manager, REGISTRATION_ATTEMPT_MAIL, owner.email, { userId: owner.id });
  }

  @ComposesMail(REGISTRATION_ATTEMPT_MAIL)
  private async compose(
    manager: EntityManager,
    request: { to: string; params: Record<string, unknown> },
  ): Promise<MailMessage | null> {
    const user = await this.users.findById(Number(request.params.userId), manager);
    if (!user || user.email !== request.to) return null;
    const base = this.config.app.publicUrl;
    return {
      to: user.email,
      subject: 'Someone tried to register with your address',
      ...this.mailer.render('registration-attempt', {
        name: user.name,
        signInUrl: `${base}/login`,
        resetUrl: `${base}/forgot-password`,
      }),
    };
  }
}
