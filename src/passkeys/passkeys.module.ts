import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { EmailVerificationModule } from '../email-verification/email-verification.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { SecurityNoticesModule } from '../security-notices/security-notices.module.js';
import { UsersModule } from '../users/users.module.js';
import { PasskeyAuthenticationService } from './passkey-authentication.service.js';
import { PasskeyChallenges } from './passkey-challenges.js';
import { PasskeysRepository } from './passkeys.repository.js';
import { PasskeysService } from './passkeys.service.js';

/** Passkeys: the security page's list, and checking one (sign-in, second factor, sudo mode). */
@Module({
  imports: [
    AuthModule,
    UsersModule,
    EmailVerificationModule,
    SecurityNoticesModule,
    RateLimitModule,
  ],
  providers: [PasskeysRepository, PasskeyChallenges, PasskeysService, PasskeyAuthenticationService],
  exports: [PasskeysService, PasskeyAuthenticationService],
})
export class PasskeysModule {}
