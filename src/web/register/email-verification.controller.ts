import { Controller, Get, Param, Post, Redirect, Render, Req, Session } from '@nestjs/common';
import { CurrentActor } from '../../http/access.js';
import { signedInUserOf } from '../page-context.js';
import type { Actor } from '../../common/actor.js';
import type { Request } from 'express';
import type { PageSession } from '../session/page-session.js';
import { Public, SignedIn } from '../../common/auth-policy.decorator.js';
import { flash } from '../flash.js';
import { isReturnPage, signInPageFor } from '../return-to.js';
import { RouteLimit } from '../../http/route-limit.js';
import { EmailVerificationService } from '../../email-verification/email-verification.service.js';
import { Form } from '../../common/validation/form.decorator.js';
import { ResendForm } from './email-verification.forms.js';

const RESENT = {
  sent: 'A new confirmation link is on its way. It works for 24 hours; earlier links no longer do.',
  confirmed: 'Your email address is confirmed already.',
};

/** What the link's page shows, by the state of the link for whoever opened it. */
const STATE_FLAGS = {
  'sign-in': 'signIn',
  confirm: 'confirm',
  confirmed: 'confirmed',
  'other-account': 'otherAccount',
} as const;

/**
 * The link mailed to confirm an address, and asking for a new one. Opening the link changes
 * nothing: its page asks the account it was sent for, signed in, to confirm with a button.
 */
@Controller('verify-email')
export class EmailVerificationController {
  constructor(private readonly verification: EmailVerificationService) {}

  /** Back to the page that asked (any page, from the banner), or to the API tokens page. */
  @Post('resend')
  @SignedIn()
  @RouteLimit('verify-email-resend')
  @Redirect('/settings/api-tokens', 303)
  async resend(
    @CurrentActor() actor: Actor,
    @Form() form: ResendForm,
    @Session() session: PageSession,
  ): Promise<{ url: string } | void> {
    flash(session, { notice: RESENT[await this.verification.resend(actor)] });
    if (isReturnPage(form.return_to)) return { url: form.return_to };
  }

  @Get(':token')
  @Public()
  @Render('email-verification/confirm')
  async page(
    @CurrentActor() actor: Actor,
    @Param('token') token: string,
    @Req() req: Request,
  ): Promise<object> {
    const state = await this.verification.inspect(actor, token);
    return {
      title: state === 'confirmed' ? 'Address confirmed' : 'Confirm your email address',
      [STATE_FLAGS[state]]: true,
      token,
      email: signedInUserOf(req)?.email,
      signInUrl: signInPageFor(`/verify-email/${token}`),
    };
  }

  @Post(':token')
  @SignedIn()
  @Redirect('/settings/api-tokens', 303)
  async confirm(
    @CurrentActor() actor: Actor,
    @Param('token') token: string,
    @Session() session: PageSession,
  ): Promise<void> {
    const { joined } = await this.verification.confirm(actor, token);
    const teams =
      joined.length > 0 ? ` You joined ${joined.join(', ')} through your invitation.` : '';
    flash(session, {
      notice: `Your email address is confirmed. You can create API tokens now.${teams}`,
    });
  }
}
