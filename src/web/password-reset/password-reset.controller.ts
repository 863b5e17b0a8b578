import { Controller, Get, Param, Post, Redirect, Render, Req, Session } from '@nestjs/common';
import { Form } from '../../common/validation/form.decorator.js';
import type { Actor } from '../../common/actor.js';
import { CurrentActor } from '../../http/access.js';
import type { Request } from 'express';
import { pageSession, type PageSession } from '../session/page-session.js';
import { SessionLifecycle } from '../session/session-lifecycle.js';
import { Public } from '../../common/auth-policy.decorator.js';
import { flash } from '../flash.js';
import { FormPage } from '../form-page.js';
import { RouteLimit } from '../../http/route-limit.js';
import { ForgotPasswordForm, ResetPasswordForm } from './password-reset.forms.js';
import {
  PasswordResetService,
  RESET_LINK_MINUTES,
} from '../../password-reset/password-reset.service.js';

const REQUESTED = `If an account uses that address, a link to choose a new password is on its way. It works for ${RESET_LINK_MINUTES} minutes.`;
const CHANGED =
  'Your password has been changed and your account signed out everywhere. Sign in with the new password.';

/** "Forgot your password?": asking for a link, and the page the link opens. */
@Controller()
export class PasswordResetController {
  constructor(
    private readonly resets: PasswordResetService,
    private readonly sessions: SessionLifecycle,
  ) {}

  @Get('forgot-password')
  @Public()
  @Render('password-reset/forgot')
  forgotPage(): object {
    return { title: 'Forgot your password?' };
  }

  /** The same answer whether or not the address has an account. */
  @Post('forgot-password')
  @Public()
  @RouteLimit('forgot-password')
  @FormPage('/forgot-password')
  @Redirect('/forgot-password', 303)
  async forgot(@Form() form: ForgotPasswordForm, @Session() session: PageSession): Promise<void> {
    await this.resets.request(form.email);
    flash(session, { notice: REQUESTED });
  }

  @Get('reset-password/:token')
  @Public()
  @Render('password-reset/reset')
  async resetPage(@Param('token') token: string): Promise<object> {
    await this.resets.assertUsable(token);
    return { title: 'Choose a new password', token };
  }

  @Post('reset-password/:token')
  @Public()
  @FormPage('/reset-password/:token')
  @Redirect('/login', 303)
  async reset(
    @CurrentActor() actor: Actor,
    @Param('token') token: string,
    @Form() form: ResetPasswordForm,
    @Req() req: Request,
  ): Promise<void> {
    await this.resets.reset(actor, token, form.password);
    // This browser's session may be one of those just ended: the notice goes in a new one.
    await this.sessions.restart(req);
    flash(pageSession(req), { notice: CHANGED });
  }
}
