import { pageSession } from '../../session/page-session.js';
import { Controller, Get, Param, Post, Redirect, Render, Req } from '@nestjs/common';
import { Form } from '../../../common/validation/form.decorator.js';
import { CurrentActor } from '../../../http/access.js';
import type { Actor } from '../../../common/actor.js';
import type { Request } from 'express';
import { SignedIn } from '../../../common/auth-policy.decorator.js';
import { flash } from '../../flash.js';
import { FormPage } from '../../form-page.js';
import { BrowserSessionsService } from '../../../account/browser-sessions.service.js';
import { SignOutOthersForm } from '../account.forms.js';
import { PasskeysService } from '../../../passkeys/passkeys.service.js';

const PAGE = '/settings/sessions';

/** Account Settings > Sessions: the browsers signed in to the account, and signing them out. */
@Controller('settings/sessions')
@SignedIn()
export class SessionsController {
  constructor(
    private readonly sessions: BrowserSessionsService,
    private readonly passkeys: PasskeysService,
  ) {}

  @Get()
  @Render('account/sessions')
  async page(@CurrentActor() actor: Actor, @Req() req: Request): Promise<object> {
    const [sessions, passkeys] = await Promise.all([
      this.sessions.list(actor, req.sessionID),
      this.passkeys.list(actor),
    ]);
    return {
      title: 'Sessions',
      sessions,
      others: sessions.some((s) => !s.current),
      passkeyCount: passkeys.length,
    };
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
    flash(pageSession(req), { notice: 'That session has been signed out.' });
  }

  @Post('revoke-others')
  @FormPage(PAGE)
  @Redirect(PAGE, 303)
  async revokeOthers(
    @CurrentActor() actor: Actor,
    @Form() form: SignOutOthersForm,
    @Req() req: Request,
  ): Promise<void> {
    const ended = await this.sessions.revokeOthers(
      actor,
      form.password,
      req.sessionID,
      form.remove_passkeys === 'on',
    );
    flash(pageSession(req), { notice: signedOutNotice(ended) });
  }
}

function signedOutNotice({ sessions, passkeys }: { sessions: number; passkeys: number }): string {
  const signedOut =
    sessions === 1
      ? '1 other session has been signed out'
      : `${sessions} other sessions have been signed out`;
  if (passkeys === 0) return `${signedOut}.`;
  return `${signedOut}, and ${passkeys === 1 ? 'your passkey' : `your ${passkeys} passkeys`} removed.`;
}
