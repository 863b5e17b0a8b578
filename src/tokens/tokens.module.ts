import { Module } from '@nestjs/common';
import { EmailVerificationModule } from '../email-verification/email-verification.module.js';
import { LastUsedRecorder } from './last-used-recorder.js';
import { TokensController } from './tokens.controller.js';
import { TokensRepository } from './tokens.repository.js';
import { TokensService } from './tokens.service.js';

@Module({
  imports: [EmailVerificationModule],
  controllers: [TokensController],
  providers: [TokensRepository, TokensService, LastUsedRecorder],
  exports: [TokensService],
})
export class TokensModule {}
