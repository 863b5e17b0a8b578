import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { TwoFactorModule } from '../two-factor/two-factor.module.js';
import { ConfirmPasswordController } from './confirm-password.controller.js';
import { SecurityController } from './security.controller.js';

/**
 * The signed-in person's own account: its security page, and confirming their password for
 * sensitive actions.
 */
@Module({
  imports: [AuthModule, TwoFactorModule],
  controllers: [ConfirmPasswordController, SecurityController],
})
export class AccountModule {}
