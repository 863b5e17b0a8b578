import { Controller, Get, Param, Post, Redirect, Render, Req } from '@nestjs/common';
import { Form } from '../common/validation/form.decorator.js';
import { CurrentActor } from '../auth/access.js';
import type { Actor } from '../common/actor.js';
import type { Request } from 'express';
import { SignedIn } from '../common/auth-policy.decorator.js';
import { flash } from '../common/web/flash.js';
import { FormPage } from '../common/web/form-page.js';
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
  async page(@CurrentActor() actor: Actor, @Req() req: Request): Promise<object> {
    const sessions = await this.sessions.list(actor, req.sessionID);
    return { title: 'Sessions', sessions, others: sessions.some((s) => !s.current) };
  }

  /** `:id` is the session's handle from the page, never its id. */
  @Post(':id/revoke')
  @Redirect(PAGE, 303)
  async revoke(
    @CurrentActor() actor: Actor,
    @Param('id') handle: string,
    @Req() req: Request,
  ): Promise<void> {
    await this.sessions.revoke(actor, handle, req.sessionID);
    flash(req.session, { notice: 'That session has been signed out.' });
  }

  @Post('revoke-others')
  @FormPage(PAGE)
  @Redirect(PAGE, 303)
  async revokeOthers(
    @CurrentActor() actor: Actor,
    @Form() form: PasswordForm,
    @Req() req: Request,
  ): Promise<void> {
    const ended = await this.sessions.revokeOthers(actor, form.password, req.sessionID);
    flash(req.session, {
      notice:
        ended === 1
          ? '1 other session has been signed out.'
          : `${ended} other sessions have been signed out.`,
    });
  }
}
