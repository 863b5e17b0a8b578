import { credentialStamp } from '../../auth/session-digests.js';
import { flash, pageSession, type PageSessionData } from '../session/page-session.js';
import { Actors, asPerson } from '../../common/actor.js';
import { actorOf } from '../../http/access.js';
import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { DomainError, ValidationError } from '../../common/errors/domain.error.js';
import { AuditLog } from '../../audit/audit-log.js';
import { TwoFactorService, type SecondFactor } from '../../two-factor/two-factor.service.js';
import { isServiceAccount, type User } from '../../users/user.entity.js';
import { PasskeyRefusedError } from '../../passkeys/passkeys.errors.js';
import { UsersRepository } from '../../users/users.repository.js';
import { SessionLifecycle } from '../session/session-lifecycle.js';
import { Clock } from '../../clock/clock.js';
import { PasskeyAuthenticationService } from '../../passkeys/passkey-authentication.service.js';
import { answeringSessionOf, passkeySessionOf } from '../session/passkey-session.js';

export const CHALLENGE_PAGE = '/two-factor-challenge';

/** How long the second factor may take after the password. */
export const PENDING_SIGN_IN_MS = 5 * 60_000;

/** No sign-in is waiting for a second factor in this session (none started, or too old). */
export class NoPendingSignInError extends DomainError {
  readonly code = 'sign_in_expired';
  /** The page the sign-in was for, to go on to after signing in again. */
  constructor(readonly returnTo?: string) {
    super('Sign in again to continue.');
  }
}

type PendingSignIn = NonNullable<PageSessionData['pendingSignIn']>;

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
    private readonly passkeys: PasskeyAuthenticationService,
  ) {}

  /** After the right password: signed in, or on to the challenge. Returns where to go next. */
  async passwordAccepted(
    req: Request,
    user: User,
    returnTo?: string,
    keepSignedIn = false,
  ): Promise<string> {
    if (!(await this.twoFactor.isEnabled(Actors.person(user.id)))) {
      return this.sessions.start(req, user, returnTo, undefined, keepSignedIn);
    }
    await this.sessions.startPending(req, user, returnTo, keepSignedIn);
    return CHALLENGE_PAGE;
  }

  /** The sign-in waiting in this session; else back to the sign-in page, told why if it expired. */
  pendingOf(req: Request): PendingSignIn {
    const pending = pageSession(req)?.pendingSignIn;
    if (pending && this.clock.nowMs() - pending.at < PENDING_SIGN_IN_MS) return pending;
    if (!pending) throw new NoPendingSignInError();
    delete pageSession(req).pendingSignIn;
    flash(pageSession(req), { error: 'Signing in took too long. Enter your password again.' });
    throw new NoPendingSignInError(pending.returnTo);
  }

  /**
   * A passkey of the person's as the second factor (their pending sign-in's): signed in, or
   * refused as a wrong code is. Returns where to go next.
   */
  async completeWithPasskey(req: Request, credential: string): Promise<string> {
    const pending = this.pendingOf(req);
    const user = await this.pendingUser(req, pending);
    const passkey = await this.passkeys.authenticate(
      actorOf(req),
      answeringSessionOf(req),
      'second-factor',
      credential,
      pending.userId,
    );
    return this.sessions.start(
      req,
      user,
      pending.returnTo,
      { method: 'password and passkey', passkey: passkey.name },
      pending.keepSignedIn,
    );
  }

  /** Whether the person signing in has a passkey to offer instead of a code. */
  async pendingHasPasskey(req: Request): Promise<boolean> {
    return this.passkeys.has(this.pendingOf(req).userId);
  }

  /** A challenge to sign in with a passkey from the sign-in page, no address typed. */
  passkeySignInOptions(req: Request): Promise<object> {
    return this.passkeys.authenticationOptions(
      passkeySessionOf(req, this.clock.nowMs()),
      'sign-in',
      null,
    );
  }

  /**
   * Signs in with a passkey: it is both factors (something held, unlocked by the person), so
   * no code is asked after it. Returns where to go next.
   */
  async signInWithPasskey(req: Request, credential: string, returnTo?: string): Promise<string> {
    const passkey = await this.passkeys.authenticate(
      actorOf(req),
      answeringSessionOf(req),
      'sign-in',
      credential,
      null,
    );
    const user = await this.users.findById(passkey.userId);
    if (!user) throw new NoPendingSignInError();
    // A service account signs in with nothing, a passkey planted on it included.
    if (isServiceAccount(user)) throw new PasskeyRefusedError();
    return this.sessions.start(req, user, returnTo, { method: 'passkey', passkey: passkey.name });
  }

  /** A challenge for a passkey as the second factor of the pending sign-in. */
  async passkeyOptions(req: Request): Promise<object> {
    const pending = this.pendingOf(req);
    return this.passkeys.authenticationOptions(
      passkeySessionOf(req, this.clock.nowMs()),
      'second-factor',
      pending.userId,
    );
  }

  /** The account signing in, unless its password changed since it was typed (then it is over). */
  private async pendingUser(req: Request, pending: PendingSignIn): Promise<User> {
    const user = await this.users.findById(pending.userId);
    if (!user || credentialStamp(user.passwordHash) !== pending.credentialStamp) {
      delete pageSession(req).pendingSignIn;
      flash(pageSession(req), { error: 'Your password has changed. Sign in with the new one.' });
      throw new NoPendingSignInError(pending.returnTo);
    }
    return user;
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
    const user = await this.pendingUser(req, pending);
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
    const next = await this.sessions.start(
      req,
      user,
      pending.returnTo,
      undefined,
      pending.keepSignedIn,
    );
    if (accepted.method === 'recovery_code') {
      const left = accepted.recoveryCodesLeft ?? 0;
      this.audit.record(actorOf(req), {
        event: 'sign-in.recovery_code_used',
        detail: { codes_left: left },
      });
      flash(pageSession(req), {
        notice: `You signed in with a recovery code; it cannot be used again. ${left} left: make new ones under Security when you run low.`,
      });
    }
    return next;
  }
}
