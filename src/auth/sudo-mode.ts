import {
  applyDecorators,
  Injectable,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import type { Observable } from 'rxjs';
import { DomainError } from '../common/errors/domain.error.js';
import { FORM_PAGE, fillPage } from '../common/web/form-page.js';
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
}

/** Whether the session's password was typed within the last RECENT_PASSWORD_MS. */
function isRecentPassword(session: Request['session'] | undefined, now: number): boolean {
  const at = session?.passwordConfirmedAt;
  return typeof at === 'number' && now - at < RECENT_PASSWORD_MS;
}

@Injectable()
export class RecentPasswordInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly clock: Clock,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<Request>();
    if (!isRecentPassword(req.session, this.clock.nowMs())) {
      // Back to the page asked for, or to the page whose form posted here, to do it again.
      const form = this.reflector.get<string | undefined>(FORM_PAGE, context.getHandler());
      const back = req.method !== 'GET' && form ? fillPage(form, req) : req.originalUrl;
      throw new PasswordConfirmationRequiredError(back);
    }
    return next.handle();
  }
}

/**
 * Sudo mode: the action needs the password typed in the last 15 minutes, else the person
 * confirms it first and comes back (GitHub's and Jetstream's "confirm password").
 */
export const RequireRecentPassword = () =>
  applyDecorators(UseInterceptors(RecentPasswordInterceptor));
