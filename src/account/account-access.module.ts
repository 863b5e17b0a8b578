import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { PasskeysModule } from '../passkeys/passkeys.module.js';
import { SecurityNoticesModule } from '../security-notices/security-notices.module.js';
import { TwoFactorModule } from '../two-factor/two-factor.module.js';
import { UsersModule } from '../users/users.module.js';
import { AccountAccessService } from './account-access.service.js';

/** What an operator does to a person's access: no page, the command line only. */
@Module({
  imports: [AuthModule, UsersModule, SecurityNoticesModule, TwoFactorModule, PasskeysModule],
  providers: [AccountAccessService],
  exports: [AccountAccessService],
})
export class AccountAccessModule {}
