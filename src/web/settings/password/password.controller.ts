import { pageSession } from '../../session/page-session.js';
import { Controller, Get, Post, Redirect, Render, Req } from '@nestjs/common';
import { Form } from '../../../common/validation/form.decorator.js';
import type { Actor } from '../../../common/actor.js';
import { CurrentActor } from '../../../http/access.js';
import type { Request } from 'express';
import { SignedIn } from '../../../common/auth-policy.decorator.js';
import { flash } from '../../flash.js';
import { FormPage } from '../../form-page.js';
import { ChangePasswordForm } from '../account.forms.js';
import { PasswordChangeService } from '../../../account/password-change.service.js';
import { SudoMode } from '../../sudo-mode.js';

const PAGE = '/settings/password';

/** Account Settings > Security > change password. */
@Controller('settings/password')
@SignedIn()
export class PasswordController {
  constructor(
    private readonly passwords: PasswordChangeService,
    private readonly sudo: SudoMode,
  ) {}

  @Get()
  @Render('account/password')
  page(): object {
    return { title: 'Change password' };
  }

  /** This browser stays signed in, under the new password's stamp; every other session ends. */
  @Post()
  @FormPage(PAGE)
  @Redirect('/settings/security', 303)
  async change(
    @CurrentActor() actor: Actor,
    @Form() form: ChangePasswordForm,
    @Req() req: Request,
  ): Promise<void> {
    const stamp = await this.passwords.change(
      actor,
      {
        current: form.current_password,
        password: form.password,
        confirmation: form.password_confirmation,
      },
      req.sessionID,
    );
    pageSession(req).credentialStamp = stamp;
    this.sudo.confirmed(pageSession(req));
    flash(pageSession(req), {
      notice: 'Your password has been changed. Every other session of your account was signed out.',
    });
  }
}
