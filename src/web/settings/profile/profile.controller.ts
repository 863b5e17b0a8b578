import { pageSession } from '../../session/page-session.js';
import { Controller, Get, Param, Post, Redirect, Render, Req } from '@nestjs/common';
import { Form } from '../../../common/validation/form.decorator.js';
import { CurrentActor } from '../../../http/access.js';
import type { Actor } from '../../../common/actor.js';
import type { Request } from 'express';
import { SessionLifecycle } from '../../session/session-lifecycle.js';
import { SignedIn } from '../../../common/auth-policy.decorator.js';
import { SignedInUser } from '../../page-context.js';
import { flash } from '../../flash.js';
import { FormPage } from '../../form-page.js';
import { SudoMode } from '../../sudo-mode.js';
import type { User } from '../../../users/user.entity.js';
import { AccountDeletionService } from '../../../account/account-deletion.service.js';
import { PasswordForm, ProfileForm } from '../account.forms.js';
import { CHANGE_EMAIL_LINK_HOURS, ProfileService } from '../../../account/profile.service.js';

const PAGE = '/settings/profile';
const EMAIL_ASKED = `To change your address, follow the link we are mailing to the new one, while signed in. It works for ${CHANGE_EMAIL_LINK_HOURS} hours; until then your address stays as it is.`;

const EMAIL_RESENT = `A new link is on its way to the new address; the one before no longer works. It works for ${CHANGE_EMAIL_LINK_HOURS} hours.`;
const EMAIL_CANCELLED = 'The change of address is cancelled: its link no longer works.';
const NO_EMAIL_CHANGE = 'No change of address is waiting.';
const PROFILE_SAVED = 'Your profile has been saved.';
const NAME_SAVED = 'Your new name has been saved.';

/** Account Settings > Profile: name, email address, and deleting the account. */
@Controller()
@SignedIn()
export class ProfileController {
  constructor(
    private readonly profile: ProfileService,
    private readonly deletion: AccountDeletionService,
    private readonly sessions: SessionLifecycle,
    private readonly sudo: SudoMode,
  ) {}

  /** Account Settings itself: its first section. */
  @Get('settings')
  @Redirect(PAGE, 302)
  settings(): void {}

  @Get('settings/profile')
  @Render('account/profile')
  async page(@CurrentActor() actor: Actor, @SignedInUser() user: User): Promise<object> {
    const pendingEmail = await this.profile.pendingChange(actor);
    return { title: 'Profile', profile: { name: user.name, email: user.email }, pendingEmail };
  }

  @Post('settings/profile/email-change/resend')
  @FormPage(PAGE)
  @Redirect(PAGE, 303)
  async resendEmailChange(@CurrentActor() actor: Actor, @Req() req: Request): Promise<void> {
    const sent = await this.profile.resendChange(actor);
    flash(pageSession(req), { notice: sent ? EMAIL_RESENT : NO_EMAIL_CHANGE });
  }

  @Post('settings/profile/email-change/cancel')
  @FormPage(PAGE)
  @Redirect(PAGE, 303)
  async cancelEmailChange(@CurrentActor() actor: Actor, @Req() req: Request): Promise<void> {
    const cancelled = await this.profile.cancelChange(actor);
    flash(pageSession(req), { notice: cancelled ? EMAIL_CANCELLED : NO_EMAIL_CHANGE });
  }

  /**
   * A new name is saved at once. Sudo mode: changing the address that password resets go to
   * needs the password typed lately (then the change goes on as it was asked).
   */
  @Post('settings/profile')
  @FormPage(PAGE)
  @Redirect(PAGE, 303)
  async update(
    @CurrentActor() actor: Actor,
    @SignedInUser() user: User,
    @Form() form: ProfileForm,
    @Req() req: Request,
  ): Promise<void> {
    if (form.email !== user.email) this.sudo.require(req, 'Change your email address');
    const emailAsked = await this.profile.update(actor, form);
    const renamed = form.name !== user.name;
    flash(pageSession(req), {
      notice: !emailAsked ? PROFILE_SAVED : renamed ? `${NAME_SAVED} ${EMAIL_ASKED}` : EMAIL_ASKED,
    });
  }

  /** The page of the link mailed to a new address: it asks before anything changes. */
  @Get('settings/profile/email/:token')
  @Render('account/confirm-email')
  async confirmEmailPage(
    @CurrentActor() actor: Actor,
    @Param('token') token: string,
  ): Promise<object> {
    const offered = await this.profile.pendingEmail(actor, token);
    return { title: 'Confirm your new email address', ...offered, token };
  }

  @Post('settings/profile/email/:token')
  @Redirect(PAGE, 303)
  async confirmEmail(
    @CurrentActor() actor: Actor,
    @Param('token') token: string,
    @Req() req: Request,
  ): Promise<void> {
    await this.profile.confirmEmail(actor, token);
    flash(pageSession(req), { notice: 'Your new email address is confirmed and in use.' });
  }

  /** The password is asked even in sudo mode. Afterwards nobody is signed in. */
  @Post('settings/account/delete')
  @FormPage(PAGE)
  @Redirect('/login', 303)
  async delete(
    @CurrentActor() actor: Actor,
    @Form() form: PasswordForm,
    @Req() req: Request,
  ): Promise<void> {
    await this.deletion.delete(actor, form.password);
    // The session's row is gone with the account: the goodbye goes in a new, empty one.
    await this.sessions.restart(req);
    flash(pageSession(req), { notice: 'Your account has been deleted. Goodbye.' });
  }
}
