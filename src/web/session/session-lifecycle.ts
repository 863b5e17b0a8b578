import { credentialStamp } from '../../auth/session-digests.js';
import { pageSession, noteActivity } from './page-session.js';
import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { randomBytes } from 'node:crypto';
import { isServiceAccount, type User } from '../../users/user.entity.js';
import { InvalidCredentialsError } from '../../auth/auth.errors.js';
import { ReferenceNotFoundError } from '../../common/errors/domain.error.js';
import { AuditLog } from '../../audit/audit-log.js';
import { DASHBOARD_PAGE, isReturnPage } from '../return-to.js';
import { AccountDisabledError } from '../../auth/auth.errors.js';
import { actorOf, signedInActor } from '../../http/access.js';
import { webCookiesFor, type WebCookies } from './web-cookies.js';
import { KEPT_SIGNED_IN_MS } from './kept-signed-in.js';
import { SessionsRepository } from '../../auth/sessions.repository.js';
import { Transactions } from '../../database/transactions.js';
import { Clock } from '../../clock/clock.js';
import type { Config } from '../../config/config.js';
import { CONFIG } from '../../config/config.module.js';

function promisify(run: (done: (err?: unknown) => void) => void): Promise<void> {
  return new Promise((resolve, reject) => run((err) => (err ? reject(err) : resolve())));
}

/** Signing in and out of a browser session. */
@Injectable()
export class SessionLifecycle {
  private readonly cookies: WebCookies;

  constructor(
    private readonly audit: AuditLog,
    private readonly sessions: SessionsRepository,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    @Inject(CONFIG) config: Config,
  ) {
    this.cookies = webCookiesFor(config);
  }

  /**
   * A new session id at sign-in, so a session id planted before it is worth nothing after.
   * Returns where to go next: `returnTo`, the page asked for before signing in, when it is one
   * of ours, or the dashboard.
   */
  async start(
    req: Request,
    user: User,
    returnTo?: string,
    /**
     * How the person proved who they are, for the security log, when not the password alone;
     * `passkey` alone means no password was typed.
     */
    method?: { method: string; passkey?: string },
    /** "Keep me signed in": a session that lasts KEPT_SIGNED_IN_DAYS, however idle. */
    keepSignedIn = false,
  ): Promise<string> {
    this.refuseDisabled(req, user);
    // Whatever path led here, a service account is never signed in.
    if (isServiceAccount(user)) throw new InvalidCredentialsError();
    await promisify((done) => pageSession(req).regenerate(done));
    // A new session (regenerated above): read it only now.
    const session = pageSession(req);
    const now = this.clock.nowMs();
    session.userId = user.id;
    session.signedInAt = now;
    if (keepSignedIn) {
      session.keptSignedIn = true;
      // Kept as the cookie's own lifetime, which each request renews (and the store's expiry).
      session.cookie.maxAge = KEPT_SIGNED_IN_MS;
    }
    // Signing in is typing the password: sensitive actions need no second ask. A passkey alone
    // counts too, except where only the password will do (see SudoOptions).
    session.passwordConfirmedAt = now;
    if (method?.method === 'passkey') session.sudoByPasskey = true;
    session.credentialStamp = credentialStamp(user.passwordHash);
    noteActivity(req, now);
    try {
      await promisify((done) => pageSession(req).save(done));
    } catch (error) {
      if (!(error instanceof ReferenceNotFoundError)) throw error;
      // The account was deleted as it signed in: there is nobody to sign in as, and the page
      // says so in a visitor's session.
      await promisify((done) => pageSession(req).regenerate(done));
      throw new InvalidCredentialsError();
    }
    this.audit.record(signedInActor(req, user.id), {
      event: 'sign-in.succeeded',
      ...(method ? { detail: method } : {}),
    });
    return isReturnPage(returnTo) ? returnTo : DASHBOARD_PAGE;
  }

  /**
   * Half-way: the password was right, the second factor is still to come. Nobody is signed in
   * yet; the session (with a new id, as at sign-in) remembers who is signing in and since when.
   */
  async startPending(
    req: Request,
    user: User,
    returnTo?: string,
    keepSignedIn = false,
  ): Promise<void> {
    this.refuseDisabled(req, user);
    if (isServiceAccount(user)) throw new InvalidCredentialsError();
    await promisify((done) => pageSession(req).regenerate(done));
    pageSession(req).pendingSignIn = {
      userId: user.id,
      attempt: randomBytes(16).toString('base64url'),
      credentialStamp: credentialStamp(user.passwordHash),
      at: this.clock.nowMs(),
      returnTo: isReturnPage(returnTo) ? returnTo : undefined,
      keepSignedIn,
    };
    await promisify((done) => pageSession(req).save(done));
  }

  /**
   * Every way in (a password, a passkey, a second factor) comes through `start` or
   * `startPending`: a disabled account is refused there, in its security log.
   */
  private refuseDisabled(req: Request, user: User): void {
    if (!user.disabledAt) return;
    this.audit.record(actorOf(req), {
      event: 'sign-in.failed',
      userId: user.id,
      detail: { reason: 'account disabled' },
    });
    throw new AccountDisabledError();
  }

  /** A new, empty session in place of the current one (after a password reset, say). */
  async restart(req: Request): Promise<void> {
    await promisify((done) => pageSession(req).regenerate(done));
  }

  /**
   * Deletes the session from the store, so the cookie is dead on every instance. Of several
   * sign-outs of one session at once, the one that deleted it records it.
   */
  async end(req: Request, res: Response): Promise<void> {
    // Built before the session goes, so the event names it.
    const actor = actorOf(req);
    const ended = await this.transactions.run((m) => this.sessions.delete(m, req.sessionID));
    if (ended && actor.kind === 'person') this.audit.record(actor, { event: 'sign-in.signed_out' });
    await promisify((done) => pageSession(req).destroy(done));
    // A __Host- cookie is cleared only with the attributes it was set with.
    const secure = this.cookies.secure === true || req.secure;
    res.clearCookie(this.cookies.session, { httpOnly: true, sameSite: 'lax', path: '/', secure });
  }
}
