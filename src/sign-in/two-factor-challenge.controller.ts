import { Controller, Get, Post, Redirect, Render, Req } from '@nestjs/common';
import { Form } from '../common/validation/form.decorator.js';
import type { Request } from 'express';
import { GuestOnly } from '../common/auth-policy.decorator.js';
import { FormPage } from '../common/web/form-page.js';
import { TwoFactorChallengeForm } from '../two-factor/dto/two-factor.forms.js';
import { CHALLENGE_PAGE, TwoFactorSignIn } from './two-factor-sign-in.js';

/** The second step of signing in, for people with two-factor sign-in on. */
@Controller(CHALLENGE_PAGE.slice(1))
@GuestOnly()
export class TwoFactorChallengeController {
  constructor(private readonly signIn: TwoFactorSignIn) {}

  @Get()
  @Render('auth/two-factor-challenge')
  page(@Req() req: Request): object {
    this.signIn.pendingOf(req);
    return { title: 'Two-factor sign-in' };
  }

  @Post()
  @FormPage(CHALLENGE_PAGE)
  @Redirect('/dashboard', 303)
  async verify(
    @Form() form: TwoFactorChallengeForm,
    @Req() req: Request,
  ): Promise<{ url: string }> {
    const input = { code: form.code, recoveryCode: form.recovery_code };
    return { url: await this.signIn.complete(req, input) };
  }
}
