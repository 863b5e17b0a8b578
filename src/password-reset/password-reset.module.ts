import { Module } from '@nestjs/common';
import { OneTimeLinksModule } from '../one-time-links/one-time-links.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { PasskeysModule } from '../passkeys/passkeys.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { UsersModule } from '../users/users.module.js';
import { PasswordResetService } from './password-reset.service.js';

@Module({
  imports: [AuthModule, UsersModule, OneTimeLinksModule, RateLimitModule, PasskeysModule],
  providers: [PasswordResetService],
  exports: [PasswordResetService],
})
export class PasswordResetModule {}
