import { Controller, Get, Param, Post, Redirect, Render, Session } from '@nestjs/common';
import type { SessionData } from 'express-session';
import { Public, SignedIn } from '../common/auth/auth-policy.decorator.js';
import { SignedInUser } from '../common/decorators/signed-in-user.decorator.js';
import { flash } from '../common/web/flash.js';
import { RouteLimit } from '../rate-limit/route-limit.guard.js';
import type { User } from '../users/user.entity.js';
import { EmailVerificationService } from './email-verification.service.js';

const RESENT = {
  sent: 'A new confirmation link is on its way. It works for 24 hours; earlier links no longer do.',
  confirmed: 'Your email address is confirmed already.',
};

/** The link mailed to confirm an address, and asking for a new one. */
@Controller('verify-email')
export class EmailVerificationController {
  constructor(private readonly verification: EmailVerificationService) {}

  @Post('resend')
  @SignedIn()
  @RouteLimit('verify-email-resend')
  @Redirect('/settings/api-tokens', 303)
  async resend(@SignedInUser() user: User, @Session() session: SessionData): Promise<void> {
    flash(session, { notice: RESENT[await this.verification.resend({ userId: user.id })] });
  }

  @Get(':token')
  @Public()
  @Render('email-verification/confirmed')
  async confirm(@Param('token') token: string): Promise<object> {
    await this.verification.confirm(token);
    return { title: 'Address confirmed' };
  }
}
