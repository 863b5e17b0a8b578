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
import type { Observable } from 'rxjs';
import { DomainError } from '../common/errors/domain.error.js';
import { keptInput } from '../common/web/flash.js';
import { FORM_PAGE, fillPage, formFieldsOf } from '../common/web/form-page.js';
import { Clock } from '../clock/clock.js';

/** How long a password typed (to sign in, register or confirm) unlocks sensitive actions. */
export const RECENT_PASSWORD_MS = 15 * 60_000;

export const CONFIRM_PASSWORD_PAGE = '/confirm-password';

/** Sends the person to confirm their password, then back to `returnTo`. */
export class PasswordConfirmationRequiredError extends DomainError {
  readonly code = 'password_confirmation_required';
  readonly status = 403;
  override readonly pageRedirect: string;
  constructor(returnTo: string) {
    super('Confirm your password to continue.');
    this.pageRedirect = `${CONFIRM_PASSWORD_PAGE}?return_to=${encodeURIComponent(returnTo)}`;
  }
}

/**
 * A form refused for want of a recent password, kept in the session to be sent again once the
 * password is confirmed (GitHub's sudo mode resumes the action the same way): where it posts,
 * the page it belongs to, what it does in words, and its fields (never a password or a code).
 */
export interface PendingAction {
  path: string;
  page: string;
  label: string;
  fields: Record<string, unknown>;
  at: number;
}

/** When the password was last typed in a session, and whether that was recent enough. */
@Injectable()
export class SudoMode {
  constructor(private readonly clock: Clock) {}

  /** The password was typed just now (signed in, confirmed, changed). */
  confirmed(session: Request['session']): void {
    session.passwordConfirmedAt = this.clock.nowMs();
  }

  isRecent(session: Request['session'] | undefined): boolean {
    return isRecentPassword(session, this.clock.nowMs());
  }

  /**
   * For a handler where only some changes are sensitive (it needs @FormPage): goes on when the
   * password was typed lately, else as @RequireRecentPassword(label) does.
   */
  require(req: Request, label: string): void {
    requireRecent(req, this.clock.nowMs(), label, req.formPage ?? req.originalUrl, req.formFields);
  }

  /** The action waiting for the password that belongs to `page`, while it is fresh. */
  pending(session: Request['session'], page: unknown): PendingAction | undefined {
    const action = session.pendingAction;
    if (!action || action.page !== page) return undefined;
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
): void {
  if (isRecentPassword(req.session, now)) {
    if (req.method !== 'GET' && req.session.pendingAction) delete req.session.pendingAction;
    return;
  }
  if (req.method === 'GET' || req.method === 'HEAD') {
    delete req.session.pendingAction;
    throw new PasswordConfirmationRequiredError(req.originalUrl);
  }
  req.session.pendingAction = {
    path: req.originalUrl,
    page,
    label,
    fields: keptInput(req.body, fields),
    at: now,
  };
  throw new PasswordConfirmationRequiredError(page);
}

/** Whether the session's password was typed within the last RECENT_PASSWORD_MS. */
function isRecentPassword(session: Request['session'] | undefined, now: number): boolean {
  const at = session?.passwordConfirmedAt;
  return typeof at === 'number' && now - at < RECENT_PASSWORD_MS;
}

const SUDO_LABEL = 'tessera:sudo-label';

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
    requireRecent(req, this.clock.nowMs(), label, page, formFieldsOf(context));
    return next.handle();
  }
}

/**
 * Sudo mode: the action needs the password typed in the last 15 minutes, else the person
 * confirms it first and the action goes on (GitHub's and Jetstream's "confirm password").
 * `label` names the action for the confirmation page ("Transfer the team").
 */
export const RequireRecentPassword = (label: string) =>
  applyDecorators(SetMetadata(SUDO_LABEL, label), UseInterceptors(RecentPasswordInterceptor));
