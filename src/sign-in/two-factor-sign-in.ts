import { Actors, asPerson } from '../common/actor.js';
import { actorOf } from '../auth/current-actor.js';
import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { DomainError, ValidationError } from '../common/errors/domain.error.js';
import { AuditLog } from '../audit/audit-log.js';
import { flash } from '../common/web/flash.js';
import { signInPageFor } from '../common/web/return-to.js';
import { TwoFactorService, type SecondFactor } from '../two-factor/two-factor.service.js';
import type { User } from '../users/user.entity.js';
import { UsersRepository } from '../users/users.repository.js';
import { credentialStamp } from '../auth/credential-stamp.js';
import { SessionLifecycle } from '../auth/session-lifecycle.js';
import { Clock } from '../clock/clock.js';

export const CHALLENGE_PAGE = '/two-factor-challenge';

/** How long the second factor may take after the password. */
export const PENDING_SIGN_IN_MS = 5 * 60_000;

/** No sign-in is waiting for a second factor in this session (none started, or too old). */
export class NoPendingSignInError extends DomainError {
  readonly code = 'sign_in_expired';
  readonly status = 401;
  override readonly pageRedirect: string;
  constructor(returnTo?: string) {
    super('Sign in again to continue.');
    this.pageRedirect = signInPageFor(returnTo ?? '/');
  }
}

type PendingSignIn = NonNullable<Request['session']['pendingSignIn']>;

/**
 * Signing in with two factors: after the password, a person with two-factor sign-in on is
 * only half signed in until a code from their app (or a recovery code) completes it.
 */
@Injectable()
export class TwoFactorSignIn {
  constructor(
    private readonly sessions: SessionLifecycle,
    private readonly twoFactor: TwoFactorService,
    private readonly users: UsersRepository,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  /** After the right password: signed in, or on to the challenge. Returns where to go next. */
  async passwordAccepted(req: Request, user: User, returnTo?: string): Promise<string> {
    if (!(await this.twoFactor.isEnabled(Actors.person(user.id)))) {
      return this.sessions.start(req, user, returnTo);
    }
    await this.sessions.startPending(req, user, returnTo);
    return CHALLENGE_PAGE;
  }

  /** The sign-in waiting in this session; else back to the sign-in page, told why if it expired. */
  pendingOf(req: Request): PendingSignIn {
    const pending = req.session?.pendingSignIn;
    if (pending && this.clock.nowMs() - pending.at < PENDING_SIGN_IN_MS) return pending;
    if (!pending) throw new NoPendingSignInError();
    delete req.session.pendingSignIn;
    flash(req.session, { error: 'Signing in took too long. Enter your password again.' });
    throw new NoPendingSignInError(pending.returnTo);
  }

  /**
   * Checks the second factor and signs the person in; returns where to go next. A sign-in whose
   * password has been changed (or reset) since it was typed is over: the new one is asked.
   */
  async complete(req: Request, input: SecondFactor): Promise<string> {
    const pending = this.pendingOf(req);
    // Not signed in yet: a visitor, acting on the account whose password it typed.
    const visitor = actorOf(req);
    const person = asPerson(visitor, pending.userId);
    const user = await this.users.findById(pending.userId);
    if (!user || credentialStamp(user.passwordHash) !== pending.credentialStamp) {
      delete req.session.pendingSignIn;
      flash(req.session, { error: 'Your password has changed. Sign in with the new one.' });
      throw new NoPendingSignInError(pending.returnTo);
    }
    let accepted;
    try {
      accepted = await this.twoFactor.verifySignIn(person, pending.attempt, input);
    } catch (error) {
      if (error instanceof ValidationError && (input.code?.trim() || input.recoveryCode?.trim())) {
        this.audit.record(visitor, {
          event: 'sign-in.failed',
          userId: pending.userId,
          detail: { reason: input.recoveryCode ? 'wrong recovery code' : 'wrong two-factor code' },
        });
      }
      throw error;
    }
    const next = await this.sessions.start(req, user, pending.returnTo);
    if (accepted.method === 'recovery_code') {
      const left = accepted.recoveryCodesLeft ?? 0;
      this.audit.record(actorOf(req), {
        event: 'sign-in.recovery_code_used',
        detail: { codes_left: left },
      });
      flash(req.session, {
        notice: `You signed in with a recovery code; it cannot be used again. ${left} left: make new ones under Security when you run low.`,
      });
    }
    return next;
  }
}
