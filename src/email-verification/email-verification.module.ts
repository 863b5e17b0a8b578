import { Module } from '@nestjs/common';
import { OneTimeLinksModule } from '../one-time-links/one-time-links.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { UsersModule } from '../users/users.module.js';
import { EmailVerificationService } from './email-verification.service.js';

@Module({
  imports: [UsersModule, OneTimeLinksModule, RateLimitModule],
  providers: [EmailVerificationService],
  exports: [EmailVerificationService],
})
export class EmailVerificationModule {}
