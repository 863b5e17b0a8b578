import { Controller, Get, Post, Query, Redirect, Render, Req } from '@nestjs/common';
import { Form } from '../common/validation/form.decorator.js';
import type { Actor } from '../common/actor.js';
import { CurrentActor } from '../auth/current-actor.js';
import type { Request } from 'express';
import { AuthService } from '../auth/auth.service.js';
import { SignedIn } from '../common/auth-policy.decorator.js';
import { flash } from '../common/web/flash.js';
import { FormPage } from '../common/web/form-page.js';
import { isReturnPage } from '../common/web/return-to.js';
import { ConfirmPasswordForm } from './dto/account.forms.js';
import { SudoMode, type PendingAction } from '../auth/sudo-mode.js';

const CONTINUE_PAGE = '/confirm-password/continue';

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
  ) {}

  @Get()
  @Render('account/confirm-password')
  page(@Query('return_to') returnTo: unknown, @Req() req: Request): object {
    const action = this.sudo.pending(req.session, returnTo);
    return {
      title: 'Confirm your password',
      returnTo: isReturnPage(returnTo) ? returnTo : '',
      action: action?.label,
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
    await this.auth.confirmPassword(actor, form.password);
    this.sudo.confirmed(req.session);
    if (this.sudo.pending(req.session, form.return_to)) return { url: CONTINUE_PAGE };
    flash(req.session, { notice: 'Password confirmed: you can go ahead.' });
    return { url: isReturnPage(form.return_to) ? form.return_to : '/dashboard' };
  }

  /**
   * The form that waited for the password, filled in as it was sent, posting where it posted
   * (a GET: shows it and changes nothing), or that nothing is waiting.
   */
  @Get('continue')
  @Render('account/continue')
  continuePage(@Req() req: Request): object {
    const action = req.session.pendingAction;
    if (!action || !this.sudo.pending(req.session, action.page)) {
      return { title: 'Nothing is waiting' };
    }
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
