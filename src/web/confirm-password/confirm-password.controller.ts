import { pageSession } from '../session/page-session.js';
import { Controller, Get, HttpCode, Post, Query, Redirect, Render, Req } from '@nestjs/common';
import { accountOf } from '../../common/actor.js';
import { Clock } from '../../clock/clock.js';
import { PasskeyCredentialForm } from '../settings/passkeys/passkeys.forms.js';
import { answeringSessionOf, passkeySessionOf } from '../session/passkey-session.js';
import { PasskeyAuthenticationService } from '../../passkeys/passkey-authentication.service.js';
import { RouteLimit } from '../../http/route-limit.js';
import { Form } from '../../common/validation/form.decorator.js';
import type { Actor } from '../../common/actor.js';
import { CurrentActor } from '../../http/access.js';
import { formOriginOf, setFormOrigin } from '../../http/request-state.js';
import type { Request } from 'express';
import { AuthService } from '../../auth/auth.service.js';
import { SignedIn } from '../../common/auth-policy.decorator.js';
import { flash } from '../flash.js';
import { FormPage } from '../form-page.js';
import { isReturnPage } from '../return-to.js';
import { ConfirmPasswordForm } from '../settings/account.forms.js';
import type { PendingAction } from '../session/page-session.js';
import { SudoMode } from '../sudo-mode.js';

const CONTINUE_PAGE = '/confirm-password/continue';

/**
 * A wrong password sends the person back to this page for the same action: with its
 * `return_to`, so that the page still names what waits.
 */
function backToThisAction(req: Request, returnTo: string | undefined): void {
  const origin = formOriginOf(req);
  if (!origin || !isReturnPage(returnTo)) return;
  setFormOrigin(req, {
    ...origin,
    page: `/confirm-password?return_to=${encodeURIComponent(returnTo)}`,
  });
}

/**
 * Sudo mode: the password again before a sensitive action, then the action goes on: a form
 * that was refused for it is sent again as it was (by the continue page's script, or with one
 * click), a page asked for is shown.
 */
@Controller('confirm-password')
@SignedIn()
export class ConfirmPasswordController {
  constructor(
    private readonly auth: AuthService,
    private readonly sudo: SudoMode,
    private readonly passkeys: PasskeyAuthenticationService,
    private readonly clock: Clock,
  ) {}

  @Get()
  @Render('account/confirm-password')
  async page(
    @CurrentActor() actor: Actor,
    @Query('return_to') returnTo: unknown,
    @Query('with') only: unknown,
    @Req() req: Request,
  ): Promise<object> {
    const action = this.sudo.pending(pageSession(req), returnTo);
    // What waits needs the password itself: a passkey is not offered (nor would it do).
    const passwordOnly = only === 'password' || action?.passwordOnly === true;
    const hasPasskey = await this.passkeys.has(accountOf(actor));
    return {
      title: 'Confirm your password',
      returnTo: isReturnPage(returnTo) ? returnTo : '',
      action: action?.label,
      hasPasskey: hasPasskey && !passwordOnly,
      passkeyNotEnough: hasPasskey && passwordOnly,
      passkeyScripts: hasPasskey && !passwordOnly,
    };
  }

  @Post()
  @FormPage('/confirm-password')
  @Redirect('/dashboard', 303)
  async confirm(
    @CurrentActor() actor: Actor,
    @Form() form: ConfirmPasswordForm,
    @Req() req: Request,
  ): Promise<{ url: string }> {
    backToThisAction(req, form.return_to);
    await this.auth.confirmPassword(actor, form.password);
    return { url: this.confirmed(req, form.return_to) };
  }

  /** A challenge to confirm with a passkey instead of the password (JSON, for the script). */
  @Post('passkey/options')
  @HttpCode(200)
  @RouteLimit('passkey-challenges')
  passkeyOptions(@CurrentActor() actor: Actor, @Req() req: Request): Promise<object> {
    return this.passkeys.authenticationOptions(
      passkeySessionOf(req, this.clock.nowMs()),
      'sudo',
      accountOf(actor),
    );
  }

  /**
   * One of the person's passkeys instead of the password: the same as typing it, except where
   * only the password will do.
   */
  @Post('passkey')
  @FormPage('/confirm-password')
  @Redirect('/dashboard', 303)
  async confirmWithPasskey(
    @CurrentActor() actor: Actor,
    @Form() form: PasskeyCredentialForm,
    @Req() req: Request,
  ): Promise<{ url: string }> {
    backToThisAction(req, form.return_to);
    await this.passkeys.authenticate(
      actor,
      answeringSessionOf(req),
      'sudo',
      form.credential,
      accountOf(actor),
    );
    return { url: this.confirmed(req, form.return_to, 'passkey') };
  }

  /** Sudo mode from now; on to the action that waited, or the page asked for. */
  private confirmed(
    req: Request,
    returnTo: string | undefined,
    via: 'password' | 'passkey' = 'password',
  ): string {
    this.sudo.confirmed(pageSession(req), via);
    if (this.sudo.bindPending(pageSession(req), returnTo)) return CONTINUE_PAGE;
    flash(pageSession(req), { notice: 'Confirmed: you can go ahead.' });
    return isReturnPage(returnTo) ? returnTo : '/dashboard';
  }

  /**
   * The form that waited for the password and was confirmed for, filled in as it was sent,
   * posting where it posted, shown once (the action itself is done by that POST); or that
   * nothing is waiting. Only Tessera's own pages lead here: see SudoMode.resume.
   */
  @Get('continue')
  @Render('account/continue')
  async continuePage(@Req() req: Request): Promise<object> {
    const action = await this.sudo.resume(req);
    if (!action) return { title: 'Nothing is waiting' };
    return { title: 'Password confirmed', action: action.label, ...formOf(action) };
  }
}

/** The kept form as hidden fields: each value of a list is a field of the same name. */
function formOf(action: PendingAction): object {
  const fields = Object.entries(action.fields).flatMap(([name, value]) =>
    (Array.isArray(value) ? value : [value]).map((one) => ({ name, value: String(one) })),
  );
  return { path: action.path, page: action.page, fields };
}
