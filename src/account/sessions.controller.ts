import { Body, Controller, Get, Param, Post, Redirect, Render, Req } from '@nestjs/common';
import type { Request } from 'express';
import { SignedIn } from '../auth/auth-policy.decorator.js';
import { SignedInUser } from '../common/decorators/signed-in-user.decorator.js';
import { flash } from '../common/web/flash.js';
import { FormPage } from '../common/web/form-page.js';
import type { User } from '../users/user.entity.js';
import { BrowserSessionsService } from './browser-sessions.service.js';
import { PasswordForm } from './dto/account.forms.js';

const PAGE = '/settings/sessions';

/** Account Settings > Sessions: the browsers signed in to the account, and signing them out. */
@Controller('settings/sessions')
@SignedIn()
export class SessionsController {
  constructor(private readonly sessions: BrowserSessionsService) {}

  @Get()
  @Render('account/sessions')
  async page(@SignedInUser() user: User, @Req() req: Request): Promise<object> {
    const sessions = await this.sessions.list({ userId: user.id }, req.sessionID);
    return { title: 'Sessions', sessions, others: sessions.some((s) => !s.current) };
  }

  /** `:id` is the session's handle from the page, never its id. */
  @Post(':id/revoke')
  @Redirect(PAGE, 303)
  async revoke(
    @SignedInUser() user: User,
    @Param('id') handle: string,
    @Req() req: Request,
  ): Promise<void> {
    await this.sessions.revoke({ userId: user.id }, handle, req.sessionID);
    flash(req.session, { notice: 'That session has been signed out.' });
  }

  @Post('revoke-others')
  @FormPage(PAGE)
  @Redirect(PAGE, 303)
  async revokeOthers(
    @SignedInUser() user: User,
    @Body() form: PasswordForm,
    @Req() req: Request,
  ): Promise<void> {
    const ended = await this.sessions.revokeOthers(user, form.password, req.ip, req.sessionID);
    flash(req.session, {
      notice:
        ended === 1
          ? '1 other session has been signed out.'
          : `${ended} other sessions have been signed out.`,
    });
  }
}
