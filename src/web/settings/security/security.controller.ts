import { Controller, Get, Render, Session } from '@nestjs/common';
import { CurrentActor } from '../../../http/access.js';
import type { Actor } from '../../../common/actor.js';
import type { PageSession } from '../../session/page-session.js';
import { SignedIn } from '../../../common/auth-policy.decorator.js';
import { TwoFactorSetups } from '../two-factor/setup-session.js';
import { TwoFactorService } from '../../../two-factor/two-factor.service.js';
import { PasskeysService } from '../../../passkeys/passkeys.service.js';

/** Account Settings > Security: how the person signs in, and the way to change it. */
@Controller('settings/security')
@SignedIn()
export class SecurityController {
  constructor(
    private readonly twoFactor: TwoFactorService,
    private readonly setups: TwoFactorSetups,
    private readonly passkeys: PasskeysService,
  ) {}

  @Get()
  @Render('account/security')
  async page(@CurrentActor() actor: Actor, @Session() session: PageSession): Promise<object> {
    const [twoFactor, passkeys, passkeyAddressToConfirm] = await Promise.all([
      this.twoFactor.status(actor),
      this.passkeys.list(actor),
      this.passkeys.addressToConfirm(actor),
    ]);
    return {
      title: 'Security',
      twoFactor,
      setupUnderWay: this.setups.has(session),
      passkeys,
      passkeyAddressToConfirm,
      passkeyScripts: true,
    };
  }
}
