import { Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module.js';
import { EmailVerificationModule } from '../email-verification/email-verification.module.js';
import { SecurityNoticesModule } from '../security-notices/security-notices.module.js';
import { LastUsedRecorder, TokenUsageRecorder } from './token-usage-recorder.js';
import { LeakedTokens } from './leaked-tokens.js';
import { TokenDetailsService } from './token-details.service.js';
import { TokenExpiryReminders } from './token-expiry-reminders.js';
import { TokenUsageRepository } from './token-usage.repository.js';
import { TokensRepository } from './tokens.repository.js';
import { TokenAuthenticator } from './token-authenticator.js';
import { TokenLifetimes } from './token-lifetimes.js';
import { TokenNotices } from './token-notices.js';
import { TokenIntrospection } from './token-introspection.js';
import { TokenPolicyNotices } from './token-policy-notices.js';
import { TokensInTeamService } from './tokens-in-team.service.js';
import { TokenRegenerationService } from './token-regeneration.service.js';
import { TokensService } from './tokens.service.js';

@Module({
  imports: [EmailVerificationModule, SecurityNoticesModule, UsersModule],
  providers: [
    TokensRepository,
    TokenUsageRepository,
    TokensService,
    TokenRegenerationService,
    TokensInTeamService,
    TokenLifetimes,
    TokenAuthenticator,
    TokenDetailsService,
    LastUsedRecorder,
    TokenUsageRecorder,
    TokenExpiryReminders,
    LeakedTokens,
    TokenNotices,
    TokenIntrospection,
    TokenPolicyNotices,
  ],
  exports: [
    TokenDetailsService,
    TokensService,
    TokenRegenerationService,
    TokensInTeamService,
    TokenLifetimes,
    TokenAuthenticator,
    TokenExpiryReminders,
    LeakedTokens,
    TokenIntrospection,
  ],
})
export class TokensModule {}
