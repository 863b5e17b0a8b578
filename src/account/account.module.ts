import { Module } from '@nestjs/common';
import { OneTimeLinksModule } from '../one-time-links/one-time-links.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { SecurityNoticesModule } from '../security-notices/security-notices.module.js';
import { TwoFactorModule } from '../two-factor/two-factor.module.js';
import { PasskeysModule } from '../passkeys/passkeys.module.js';
import { TeamsModule } from '../teams/teams.module.js';
import { UsersModule } from '../users/users.module.js';
import { AccountDeletionRepository } from './account-deletion.repository.js';
import { AccountDeletionService } from './account-deletion.service.js';
import { BrowserSessionsService } from './browser-sessions.service.js';
import { PasswordChangeService } from './password-change.service.js';
import { ProfileService } from './profile.service.js';

/**
 * The signed-in person's own account: profile and address, password, signed-in sessions,
 * deleting the account, the security page, and confirming their password for sensitive actions.
 */
@Module({
  imports: [
    AuthModule,
    UsersModule,
    OneTimeLinksModule,
    RateLimitModule,
    SecurityNoticesModule,
    TwoFactorModule,
    PasskeysModule,
    TeamsModule,
  ],
  providers: [
    PasswordChangeService,
    BrowserSessionsService,
    AccountDeletionService,
    AccountDeletionRepository,
    ProfileService,
  ],
  exports: [PasswordChangeService, BrowserSessionsService, AccountDeletionService, ProfileService],
})
export class AccountModule {}
