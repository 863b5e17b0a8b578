import { pageSession } from '../../../auth/page-session.js';
import { Controller, Get, Param, Post, Redirect, Render, Req } from '@nestjs/common';
import { Form } from '../../../common/validation/form.decorator.js';
import { CurrentActor } from '../../../auth/access.js';
import type { Actor } from '../../../common/actor.js';
import type { Request } from 'express';
import { SessionLifecycle } from '../../../auth/session-lifecycle.js';
import { SignedIn } from '../../../common/auth-policy.decorator.js';
import { SignedInUser } from '../../../auth/signed-in-user.js';
import { flash } from '../../flash.js';
import { FormPage } from '../../form-page.js';
import { SudoMode } from '../../sudo-mode.js';
import type { User } from '../../../users/user.entity.js';
import { AccountDeletionService } from '../../../account/account-deletion.service.js';
import { PasswordForm, ProfileForm } from '../account.forms.js';
import { CHANGE_EMAIL_LINK_HOURS, ProfileService } from '../../../account/profile.service.js';

const PAGE = '/settings/profile';
const EMAIL_ASKED = `To change your address, follow the link we are mailing to the new one, while signed in. It works for ${CHANGE_EMAIL_LINK_HOURS} hours; until then your address stays as it is.`;

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

  @Get('settings/profile')
  @Render('account/profile')
  page(@SignedInUser() user: User): object {
    return { title: 'Profile', profile: { name: user.name, email: user.email } };
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
    flash(pageSession(req), { notice: emailAsked ? EMAIL_ASKED : 'Your profile has been saved.' });
  }

  /** The page of the link mailed to a new address: it asks before anything changes. */
  @Get('settings/profile/email/:token')
  @Render('account/confirm-email')
  async confirmEmailPage(
    @CurrentActor() actor: Actor,
    @Param('token') token: string,
  ): Promise<object> {
    const email = await this.profile.pendingEmail(actor, token);
    return { title: 'Confirm your new email address', email, token };
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
