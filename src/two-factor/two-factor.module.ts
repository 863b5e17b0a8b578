import { Module } from '@nestjs/common';
import { EmailVerificationModule } from '../email-verification/email-verification.module.js';
import { SecurityNoticesModule } from '../security-notices/security-notices.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { SecretCipher } from './secret-cipher.js';
import { TwoFactorSetups } from './setup-session.js';
import { TotpCodes } from './totp.js';
import { TwoFactorLimiter } from './two-factor-limiter.js';
import { TwoFactorRepository } from './two-factor.repository.js';
import { TwoFactorService } from './two-factor.service.js';

/** Two-factor sign-in: the authenticator and recovery codes, and their settings pages. */
@Module({
  imports: [RateLimitModule, EmailVerificationModule, SecurityNoticesModule],
  providers: [
    TwoFactorRepository,
    TwoFactorService,
    TwoFactorSetups,
    TotpCodes,
    SecretCipher,
    TwoFactorLimiter,
  ],
  exports: [TwoFactorService, TwoFactorSetups],
})
export class TwoFactorModule {}
