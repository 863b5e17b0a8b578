import { pageSession } from '../session/page-session.js';
import { Controller, Get, HttpCode, Post, Query, Redirect, Render, Req, Res } from '@nestjs/common';
import { PasskeyCredentialForm } from '../settings/passkeys/passkeys.forms.js';
import { Form } from '../../common/validation/form.decorator.js';
import type { Actor } from '../../common/actor.js';
import { CurrentActor } from '../../http/access.js';
import type { Request, Response } from 'express';
import { FormPage } from '../form-page.js';
import { flash } from '../flash.js';
import { isReturnPage, SIGNED_OUT_PAGE } from '../return-to.js';
import { RouteLimit } from '../../http/route-limit.js';
import { AuthService } from '../../auth/auth.service.js';
import { AlreadySignedInError } from '../../auth/auth.errors.js';
import { signedInUserOf } from '../page-context.js';
import { GuestOnly, Public, SignedIn } from '../../common/auth-policy.decorator.js';
import { EmailVerificationService } from '../../email-verification/email-verification.service.js';
import { LoginForm, RegisterForm } from './sign-in.forms.js';
import { RegistrationService } from '../../sign-in/registration.service.js';
import { SessionLifecycle } from '../session/session-lifecycle.js';
import { KEPT_SIGNED_IN_DAYS } from '../session/kept-signed-in.js';
import { TwoFactorSignIn } from './two-factor-sign-in.js';

/** After signing out: the sign-in page says so (the session, and any flash, is gone). */

/** Sign-up, sign-in and sign-out pages. */
@Controller()
export class AuthController {
  constructor(
    private readonly registration: RegistrationService,
    private readonly auth: AuthService,
    private readonly sessions: SessionLifecycle,
    private readonly twoFactor: TwoFactorSignIn,
    private readonly verification: EmailVerificationService,
  ) {}

  @Get('register')
  @GuestOnly()
  @Render('auth/register')
  registerPage(@Query('invitation') invitation: unknown, @Query('email') email: unknown): object {
    // From an invitation's link: the invited address, fixed; joining follows its confirmation.
    const invited =
      typeof invitation === 'string' &&
      /^[A-Za-z0-9_-]{43}$/.test(invitation) &&
      typeof email === 'string' &&
      email.length <= 255
        ? { invitation, email }
        : undefined;
    return { title: 'Create your account', invited };
  }

  /** The same answer whether or not the address has an account already (see the service). */
  @Post('register')
  @GuestOnly()
  @RouteLimit('register')
  @FormPage('/register')
  @Redirect('/register/check-email', 303)
  async register(
    @CurrentActor() actor: Actor,
    @Form() form: RegisterForm,
    @Req() req: Request,
  ): Promise<void> {
    await this.registration.register(actor, form);
    // For the next page to name, and to send a new link to; whatever the outcome.
    pageSession(req).signUpEmail = form.email;
    pageSession(req).signUpInvited = form.invitation !== undefined;
  }

  @Get('register/check-email')
  @Public()
  @Render('auth/check-email')
  checkEmailPage(@Req() req: Request): object {
    // Signed in with the address confirmed already: nothing is left to check.
    if (this.verification.required && signedInUserOf(req)?.emailVerifiedAt) {
      throw new AlreadySignedInError();
    }
    return {
      title: 'Check your mail',
      verification: this.verification.required,
      email: pageSession(req)?.signUpEmail,
      invited: pageSession(req)?.signUpInvited === true,
    };
  }

  /** A new link for the address just signed up with; the same answer whatever it holds. */
  @Post('register/resend')
  @Public()
  @RouteLimit('sign-up-resend')
  @Redirect('/register/check-email', 303)
  async resendConfirmation(@Req() req: Request): Promise<void> {
    const email = pageSession(req).signUpEmail;
    if (email) await this.verification.resendTo(email);
    flash(pageSession(req), {
      notice: email
        ? `If an account waits for ${email} to be confirmed, a new link is on its way; earlier links no longer work.`
        : 'This page was open too long to send a new link from it. Sign in with the address and password you signed up with: the page you land on sends a new link.',
    });
  }

  @Get('login')
  @GuestOnly()
  @Render('auth/login')
  loginPage(
    @Query('return_to') returnTo: unknown,
    @Query('signed_out') signedOut: unknown,
    @Query('session_ended') sessionEnded: unknown,
  ): object {
    return {
      title: 'Sign in',
      signedOut: signedOut === '1',
      sessionEnded: sessionEnded === '1' && signedOut !== '1',
      keptSignedInDays: KEPT_SIGNED_IN_DAYS,
      returnTo: isReturnPage(returnTo) ? returnTo : undefined,
      passkeyScripts: true,
    };
  }

  /** Signs in, or with two-factor sign-in on goes on to ask for a code. */
  @Post('login')
  @GuestOnly()
  @FormPage('/login')
  @Redirect('/dashboard', 303)
  async login(
    @CurrentActor() actor: Actor,
    @Form() form: LoginForm,
    @Req() req: Request,
  ): Promise<{ url: string }> {
    return {
      url: await this.twoFactor.passwordAccepted(
        req,
        await this.auth.signIn(actor, form.email, form.password),
        form.return_to,
        form.remember === 'on',
      ),
    };
  }

  /** A challenge to sign in with a passkey (JSON, for the page's script). */
  @Post('login/passkey/options')
  @GuestOnly()
  @HttpCode(200)
  @RouteLimit('passkey-challenges')
  passkeyOptions(@Req() req: Request): Promise<object> {
    return this.twoFactor.passkeySignInOptions(req);
  }

  /** Signs in with a passkey: no address, no password, no code. */
  @Post('login/passkey')
  @GuestOnly()
  @FormPage('/login')
  @Redirect('/dashboard', 303)
  async loginWithPasskey(
    @Form() form: PasskeyCredentialForm,
    @Req() req: Request,
  ): Promise<{ url: string }> {
    return {
      url: await this.twoFactor.signInWithPasskey(req, form.credential, form.return_to),
    };
  }

  @Post('logout')
  @SignedIn()
  @Redirect(SIGNED_OUT_PAGE, 303)
  async logout(@Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<void> {
    await this.sessions.end(req, res);
  }
}
