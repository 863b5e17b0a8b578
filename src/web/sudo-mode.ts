import { pageSession, type PageSession, type PendingAction } from './session/page-session.js';
import {
  applyDecorators,
  Injectable,
  SetMetadata,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { formOriginOf } from '../http/request-state.js';
import type { Observable } from 'rxjs';
import { DomainError } from '../common/errors/domain.error.js';
import { keptInput } from './flash.js';
import { FORM_PAGE, fillPage, formFieldsOf } from './form-page.js';
import { Clock } from '../clock/clock.js';
import { CrossSiteRequestError } from '../auth/auth.errors.js';
import { isNavigationFromHere } from './session/request-site.js';
import { TypeormSessionStore } from './session/web-session.js';

/** How long a password typed (to sign in, register or confirm) unlocks sensitive actions. */
export const RECENT_PASSWORD_MS = 15 * 60_000;

export const CONFIRM_PASSWORD_PAGE = '/confirm-password';

export interface SudoOptions {
  /**
   * Only the password typed lately will do, not a passkey (one that signed the person in, or
   * confirmed with): for adding a passkey and changing two-factor sign-in, where a passkey would
   * vouch for itself. A passkey planted on the account, or a browser signed in with one, cannot
   * then add another or turn the second factor off without the password.
   */
  passwordOnly?: boolean;
  /**
   * Fields whose values are secrets (an audit stream's Authorization value): a submission that
   * carries one is not kept for after the password, which would put the secret in the session;
   * the person confirms, comes back to the form's page and sends it again.
   */
  secretFields?: readonly string[];
}

/** Where to confirm the password (`with=password`: a passkey will not do) and come back to `returnTo`. */
export function confirmationPage(returnTo: string, { passwordOnly }: SudoOptions = {}): string {
  const query = `return_to=${encodeURIComponent(returnTo)}${passwordOnly ? '&with=password' : ''}`;
  return `${CONFIRM_PASSWORD_PAGE}?${query}`;
}

/** Sends the person to confirm their password, then back to `returnTo`. */
export class PasswordConfirmationRequiredError extends DomainError {
  readonly code = 'password_confirmation_required';
  constructor(
    readonly returnTo: string,
    readonly options: SudoOptions = {},
  ) {
    super('Confirm your password to continue.');
  }
}

/** When the password was last typed in a session, and whether that was recent enough. */
@Injectable()
export class SudoMode {
  constructor(
    private readonly clock: Clock,
    private readonly sessions: TypeormSessionStore,
  ) {}

  /**
   * The person proved it is them just now: typed the password (signed in, confirmed, changed
   * it), or confirmed with a passkey (which does not count where only the password will do).
   */
  confirmed(session: PageSession, via: 'password' | 'passkey' = 'password'): void {
    session.passwordConfirmedAt = this.clock.nowMs();
    if (via === 'passkey') session.sudoByPasskey = true;
    else delete session.sudoByPasskey;
  }

  isRecent(session: PageSession | undefined, options: SudoOptions = {}): boolean {
    return isRecentPassword(session, this.clock.nowMs(), options);
  }

  /**
   * For a handler where only some changes are sensitive (it needs @FormPage): goes on when the
   * password was typed lately, else as @RequireRecentPassword(label) does.
   */
  require(req: Request, label: string): void {
    const form = formOriginOf(req);
    requireRecent(req, this.clock.nowMs(), label, form?.page ?? req.originalUrl, form?.fields);
  }

  /** The action waiting for the password that belongs to `page`, while it is fresh. */
  pending(session: PageSession, page: unknown): PendingAction | undefined {
    const action = session.pendingAction;
    if (!action || action.page !== page) return undefined;
    return this.clock.nowMs() - action.at < RECENT_PASSWORD_MS ? action : undefined;
  }

  /**
   * The password was just confirmed on the page of `returnTo`: the action waiting for that page
   * is now the continue page's to send (true), or, confirmed for anything else, any action
   * waiting is dropped, never to be sent by a later visit to the continue page (false).
   */
  bindPending(session: PageSession, returnTo: unknown): boolean {
    const action = this.pending(session, returnTo);
    if (!action) {
      delete session.pendingAction;
      return false;
    }
    action.confirmedAt = this.clock.nowMs();
    return true;
  }

  /**
   * The action the person just confirmed their password for, taken out of the session as the
   * continue page shows it: once. Only for a navigation that the browser says started on
   * Tessera's pages (or with the person alone); anything else, a link from another site
   * included, drops what waits and is refused.
   */
  async resume(req: Request): Promise<PendingAction | undefined> {
    // Taken from the stored session in one step: of several requests of the session at once,
    // on any instance, one gets it.
    const action = await this.sessions.take(req, 'pendingAction');
    if (!isNavigationFromHere(req)) {
      throw new CrossSiteRequestError(
        'Tessera goes on with an action you confirmed only when its own pages lead here, not a link from elsewhere. Nothing was done: do it again from its page (your password is confirmed).',
        'resumed_action',
      );
    }
    if (action?.confirmedAt === undefined) return undefined;
    return this.clock.nowMs() - action.at < RECENT_PASSWORD_MS ? action : undefined;
  }
}

/**
 * Goes on when the password was typed lately (and forgets any action kept for it). Else sends the
 * person to confirm it: a form's submission is kept, so that after the password it can be sent
 * again as it was (`label` says what it does); a page asked for is simply shown again.
 */
function requireRecent(
  req: Request,
  now: number,
  label: string,
  page: string,
  fields: readonly string[] = [],
  options: SudoOptions = {},
): void {
  if (isRecentPassword(pageSession(req), now, options)) {
    if (req.method !== 'GET' && pageSession(req).pendingAction)
      delete pageSession(req).pendingAction;
    return;
  }
  if (req.method === 'GET' || req.method === 'HEAD') {
    delete pageSession(req).pendingAction;
    throw new PasswordConfirmationRequiredError(req.originalUrl, options);
  }
  if (carriesSecret(req.body, options.secretFields)) {
    delete pageSession(req).pendingAction;
    throw new PasswordConfirmationRequiredError(page, options);
  }
  pageSession(req).pendingAction = {
    path: req.originalUrl,
    page,
    label,
    fields: keptInput(req.body, fields),
    at: now,
    ...(options.passwordOnly ? { passwordOnly: true } : {}),
  };
  throw new PasswordConfirmationRequiredError(page, options);
}

function carriesSecret(body: unknown, fields: readonly string[] = []): boolean {
  const values = (body ?? {}) as Record<string, unknown>;
  return fields.some((field) => typeof values[field] === 'string' && values[field] !== '');
}

/**
 * Whether the session's password was typed (or, unless `passwordOnly`, a passkey used) within
 * the last RECENT_PASSWORD_MS.
 */
function isRecentPassword(
  session: PageSession | undefined,
  now: number,
  { passwordOnly = false }: SudoOptions = {},
): boolean {
  const at = session?.passwordConfirmedAt;
  if (typeof at !== 'number' || now - at >= RECENT_PASSWORD_MS) return false;
  return !(passwordOnly && session?.sudoByPasskey === true);
}

const SUDO_LABEL = 'tessera:sudo-label';
const SUDO_OPTIONS = 'tessera:sudo-options';

@Injectable()
export class RecentPasswordInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly clock: Clock,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<Request>();
    const handler = context.getHandler();
    const form = this.reflector.get<string | undefined>(FORM_PAGE, handler);
    // The page whose form posted here, to come back to (or the page asked for).
    const page = form ? fillPage(form, req) : req.originalUrl;
    const label = this.reflector.get<string>(SUDO_LABEL, handler);
    const options = this.reflector.get<SudoOptions | undefined>(SUDO_OPTIONS, handler);
    requireRecent(req, this.clock.nowMs(), label, page, formFieldsOf(context), options);
    return next.handle();
  }
}

/**
 * Sudo mode: the action needs the password typed in the last 15 minutes (or a passkey used,
 * unless `passwordOnly`), else the person confirms it first and the action goes on (GitHub's
 * and Jetstream's "confirm password"). `label` names the action for the confirmation page
 * ("Transfer the team").
 */
export const RequireRecentPassword = (label: string, options: SudoOptions = {}) =>
  applyDecorators(
    SetMetadata(SUDO_LABEL, label),
    SetMetadata(SUDO_OPTIONS, options),
    UseInterceptors(RecentPasswordInterceptor),
  );
