import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { EmailVerificationModule } from '../email-verification/email-verification.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { TeamsModule } from '../teams/teams.module.js';
import { TwoFactorModule } from '../two-factor/two-factor.module.js';
import { PasskeysModule } from '../passkeys/passkeys.module.js';
import { UsersModule } from '../users/users.module.js';
import { RegistrationService } from './registration.service.js';
import { TwoFactorSignIn } from './two-factor-sign-in.js';

/**
 * Signing up and signing in from the pages: registration (an account, its personal team and the
 * confirmation mail), the password form and the second factor's challenge.
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
  providers: [RegistrationService, TwoFactorSignIn],
  exports: [RegistrationService, TwoFactorSignIn],
})
export class SignInModule {}
