import { Controller, Get, HttpCode, Post, Redirect, Render, Session } from '@nestjs/common';
import { Form } from '../../../common/validation/form.decorator.js';
import { CurrentActor } from '../../../http/access.js';
import type { Actor } from '../../../common/actor.js';
import type { PageSession } from '../../session/page-session.js';
import { SignedIn } from '../../../common/auth-policy.decorator.js';
import { SignedInUser } from '../../page-context.js';
import { flash } from '../../flash.js';
import { FormPage } from '../../form-page.js';
import { RequireRecentPassword } from '../../sudo-mode.js';
import type { User } from '../../../users/user.entity.js';
import { ConfirmTwoFactorForm, NewRecoveryCodesForm } from './two-factor.forms.js';
import { TwoFactorSetups } from './setup-session.js';
import { TwoFactorService } from '../../../two-factor/two-factor.service.js';
import { toSetupView } from './two-factor.view.js';

const SECURITY_PAGE = '/settings/security';
const SETUP_PAGE = '/settings/two-factor';
/** A passkey (that signed the person in, say) does not vouch for changes to the second factor. */
const PASSWORD_ONLY = { passwordOnly: true };

/**
 * Account Settings > Security > two-factor sign-in: setting it up, new recovery codes, turning
 * it off. Starting, new codes and turning off need the password typed in the last 15 minutes:
 * the password itself, not a passkey.
 */
@Controller('settings/two-factor')
@SignedIn()
export class TwoFactorSettingsController {
  constructor(
    private readonly twoFactor: TwoFactorService,
    private readonly setups: TwoFactorSetups,
  ) {}

  /** The setup under way, shown again (after a refused code, or a reload). */
  @Get()
  @Render('two-factor/setup')
  setupPage(
    @CurrentActor() actor: Actor,
    @SignedInUser() user: User,
    @Session() session: PageSession,
  ): Promise<object> {
    return this.setupView(actor, user, this.setups.of(session));
  }

  @Post()
  @HttpCode(200)
  @FormPage(SECURITY_PAGE)
  @RequireRecentPassword('Set up two-factor sign-in', PASSWORD_ONLY)
  @Render('two-factor/setup')
  async begin(
    @CurrentActor() actor: Actor,
    @SignedInUser() user: User,
    @Session() session: PageSession,
  ): Promise<object> {
    const sealed = await this.twoFactor.beginSetup(actor);
    this.setups.keep(session, sealed);
    return this.setupView(actor, user, sealed);
  }

  /** Answers with the recovery codes themselves: they are shown in this page only. */
  @Post('confirm')
  @HttpCode(200)
  @FormPage(SETUP_PAGE)
  @Render('two-factor/recovery-codes')
  async confirm(
    @CurrentActor() actor: Actor,
    @Form() form: ConfirmTwoFactorForm,
    @Session() session: PageSession,
  ): Promise<object> {
    const codes = await this.twoFactor.confirm(actor, this.setups.of(session), form.code);
    this.setups.clear(session);
    return { title: 'Recovery codes', codes, justEnabled: true };
  }

  @Post('recovery-codes')
  @HttpCode(200)
  @FormPage(SECURITY_PAGE)
  @RequireRecentPassword('Make new recovery codes', PASSWORD_ONLY)
  @Render('two-factor/recovery-codes')
  async regenerate(
    @CurrentActor() actor: Actor,
    @Form() form: NewRecoveryCodesForm,
  ): Promise<object> {
    const version = form.version === undefined ? undefined : Number(form.version);
    const codes = await this.twoFactor.regenerateRecoveryCodes(actor, version);
    return { title: 'Recovery codes', codes, justEnabled: false };
  }

  @Post('disable')
  @FormPage(SECURITY_PAGE)
  @RequireRecentPassword('Turn off two-factor sign-in', PASSWORD_ONLY)
  @Redirect(SECURITY_PAGE, 303)
  async disable(@CurrentActor() actor: Actor, @Session() session: PageSession): Promise<void> {
    await this.twoFactor.disable(actor);
    flash(session, { notice: 'Two-factor sign-in is off. Your password alone signs you in.' });
  }

  private async setupView(actor: Actor, user: User, sealed: string): Promise<object> {
    const setup = this.twoFactor.describeSetup(actor, sealed, user.email);
    return { title: 'Set up two-factor sign-in', ...(await toSetupView(setup)) };
  }
}
