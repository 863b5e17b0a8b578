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
import { SudoMode } from '../auth/sudo-mode.js';

/** Sudo mode: the password again before a sensitive action, then back to it. */
@Controller('confirm-password')
@SignedIn()
export class ConfirmPasswordController {
  constructor(
    private readonly auth: AuthService,
    private readonly sudo: SudoMode,
  ) {}

  @Get()
  @Render('account/confirm-password')
  page(@Query('return_to') returnTo: unknown): object {
    return { title: 'Confirm your password', returnTo: isReturnPage(returnTo) ? returnTo : '' };
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
    flash(req.session, { notice: 'Password confirmed: you can go ahead.' });
    return { url: isReturnPage(form.return_to) ? form.return_to : '/dashboard' };
  }
}
