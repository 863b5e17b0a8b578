import { Controller, HttpCode, Post, Redirect, Req, Session } from '@nestjs/common';
import type { Request } from 'express';
import { pageSession, type PageSession } from '../../session/page-session.js';
import { CurrentActor } from '../../../http/access.js';
import { confirmationPage, RequireRecentPassword, SudoMode } from '../../sudo-mode.js';
import { Clock } from '../../../clock/clock.js';
import type { Actor } from '../../../common/actor.js';
import { SignedIn } from '../../../common/auth-policy.decorator.js';
import { IdParam } from '../../../common/decorators/id-param.decorator.js';
import { Form } from '../../../common/validation/form.decorator.js';
import { flash } from '../../flash.js';
import { FormPage } from '../../form-page.js';
import { RouteLimit } from '../../../http/route-limit.js';
import { AddPasskeyForm, PasskeyNameForm } from './passkeys.forms.js';
import { answeringSessionOf, passkeySessionOf } from '../../session/passkey-session.js';
import { PasskeysService } from '../../../passkeys/passkeys.service.js';

const SECURITY_PAGE = '/settings/security';
const PASSWORD_ONLY = { passwordOnly: true };

/**
 * Account Settings > Security's passkeys: adding (the password typed lately: a passkey does not
 * vouch for another), renaming, and removing (sudo mode).
 */
@Controller('settings/passkeys')
@SignedIn()
export class PasskeysController {
  constructor(
    private readonly passkeys: PasskeysService,
    private readonly sudo: SudoMode,
    private readonly clock: Clock,
  ) {}

  /**
   * The options the page's script hands to the browser to make a passkey (JSON); or, when the
   * password was not typed lately, where to confirm it first.
   */
  @Post('options')
  @HttpCode(200)
  @RouteLimit('passkey-challenges')
  async options(@CurrentActor() actor: Actor, @Req() req: Request): Promise<object> {
    if (!this.sudo.isRecent(pageSession(req), PASSWORD_ONLY)) {
      return { confirmPassword: confirmationPage(SECURITY_PAGE, PASSWORD_ONLY) };
    }
    return this.passkeys.registrationOptions(actor, passkeySessionOf(req, this.clock.nowMs()));
  }

  @Post()
  @FormPage(SECURITY_PAGE)
  @RequireRecentPassword('Add the passkey', PASSWORD_ONLY)
  @Redirect(SECURITY_PAGE, 303)
  async add(
    @CurrentActor() actor: Actor,
    @Form() form: AddPasskeyForm,
    @Req() req: Request,
  ): Promise<void> {
    const passkey = await this.passkeys.register(
      actor,
      answeringSessionOf(req),
      form.name,
      form.credential,
    );
    flash(pageSession(req), {
      notice: `Passkey "${passkey.name}" added: use it to sign in without your password.`,
    });
  }

  @Post(':id')
  @FormPage(SECURITY_PAGE)
  @Redirect(SECURITY_PAGE, 303)
  async rename(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @Form() form: PasskeyNameForm,
    @Session() session: PageSession,
  ): Promise<void> {
    const passkey = await this.passkeys.rename(actor, id, form.name);
    flash(session, { notice: `The passkey is now called "${passkey.name}".` });
  }

  @Post(':id/delete')
  @FormPage(SECURITY_PAGE)
  @RequireRecentPassword('Remove the passkey')
  @Redirect(SECURITY_PAGE, 303)
  async remove(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @Session() session: PageSession,
  ): Promise<void> {
    const passkey = await this.passkeys.remove(actor, id);
    flash(session, {
      notice: `Passkey "${passkey.name}" removed: it signs nothing in from now on.`,
    });
  }
}
