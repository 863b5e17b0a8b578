import { Module } from '@nestjs/common';
import { EmailVerificationModule } from '../email-verification/email-verification.module.js';
import { SecurityNoticesModule } from '../security-notices/security-notices.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { SecretCipher } from './secret-cipher.js';
import { TotpCodes } from './totp.js';
import { TwoFactorLimiter } from './two-factor-limiter.js';
import { TwoFactorRepository } from './two-factor.repository.js';
import { TwoFactorService } from './two-factor.service.js';

/** Two-factor sign-in: the authenticator and recovery codes (their pages are the page edge's). */
@Module({
  imports: [RateLimitModule, EmailVerificationModule, SecurityNoticesModule],
  providers: [TwoFactorRepository, TwoFactorService, TotpCodes, SecretCipher, TwoFactorLimiter],
  exports: [TwoFactorService],
})
export class TwoFactorModule {}
