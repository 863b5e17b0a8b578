import { Controller, Get, Render, Session } from '@nestjs/common';
import type { SessionData } from 'express-session';
import { SignedIn } from '../auth/auth-policy.decorator.js';
import { SignedInUser } from '../common/decorators/signed-in-user.decorator.js';
import { TwoFactorSetups } from '../two-factor/setup-session.js';
import { TwoFactorService } from '../two-factor/two-factor.service.js';
import type { User } from '../users/user.entity.js';

/** Account Settings > Security: how the person signs in, and the way to change it. */
@Controller('settings/security')
@SignedIn()
export class SecurityController {
  constructor(
    private readonly twoFactor: TwoFactorService,
    private readonly setups: TwoFactorSetups,
  ) {}

  @Get()
  @Render('account/security')
  async page(@SignedInUser() user: User, @Session() session: SessionData): Promise<object> {
    return {
      title: 'Security',
      twoFactor: await this.twoFactor.status({ userId: user.id }),
      setupUnderWay: this.setups.has(session),
    };
  }
}
