import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { EmailVerificationModule } from '../email-verification/email-verification.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { TeamsModule } from '../teams/teams.module.js';
import { TwoFactorModule } from '../two-factor/two-factor.module.js';
import { PasskeysModule } from '../passkeys/passkeys.module.js';
import { UsersModule } from '../users/users.module.js';
import { RegistrationService } from './registration.service.js';

/**
 * Signing up: registration (an account, its personal team and the confirmation mail). Signing in
 * (the session, the second factor's challenge) is the page edge's, web/session and web/sign-in.
 */
@Module({
  imports: [
    AuthModule,
    RateLimitModule,
    EmailVerificationModule,
    UsersModule,
    TeamsModule,
    TwoFactorModule,
    PasskeysModule,
  ],
  providers: [RegistrationService],
  exports: [RegistrationService],
})
export class SignInModule {}
