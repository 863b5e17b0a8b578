import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { ConfirmPasswordController } from './confirm-password.controller.js';

/** The signed-in person's own account: confirming their password for sensitive actions. */
@Module({
  imports: [AuthModule],
  controllers: [ConfirmPasswordController],
})
export class AccountModule {}
