import { Controller, Get, HttpCode, Post, Redirect, Render, Req } from '@nestjs/common';
import { PasskeyCredentialForm } from '../settings/passkeys/passkeys.forms.js';
import { RouteLimit } from '../../http/route-limit.js';
import { Form } from '../../common/validation/form.decorator.js';
import type { Request } from 'express';
import { GuestOnly } from '../../common/auth-policy.decorator.js';
import { FormPage } from '../form-page.js';
import { TwoFactorChallengeForm } from '../settings/two-factor/two-factor.forms.js';
import { CHALLENGE_PAGE, TwoFactorSignIn } from './two-factor-sign-in.js';

/** The second step of signing in, for people with two-factor sign-in on. */
@Controller(CHALLENGE_PAGE.slice(1))
@GuestOnly()
export class TwoFactorChallengeController {
  constructor(private readonly signIn: TwoFactorSignIn) {}

  @Get()
  @Render('auth/two-factor-challenge')
  async page(@Req() req: Request): Promise<object> {
    const hasPasskey = await this.signIn.pendingHasPasskey(req);
    return { title: 'Two-factor sign-in', hasPasskey, passkeyScripts: hasPasskey };
  }

  /** A challenge for a passkey instead of a code (JSON, for the page's script). */
  @Post('passkey/options')
  @HttpCode(200)
  @RouteLimit('passkey-challenges')
  passkeyOptions(@Req() req: Request): Promise<object> {
    return this.signIn.passkeyOptions(req);
  }

  @Post('passkey')
  @FormPage(CHALLENGE_PAGE)
  @Redirect('/dashboard', 303)
  async verifyPasskey(
    @Form() form: PasskeyCredentialForm,
    @Req() req: Request,
  ): Promise<{ url: string }> {
    return { url: await this.signIn.completeWithPasskey(req, form.credential) };
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
