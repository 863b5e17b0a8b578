import { Module } from '@nestjs/common';
import { LastUsedRecorder } from './last-used-recorder.js';
import { TokensController } from './tokens.controller.js';
import { TokensRepository } from './tokens.repository.js';
import { TokensService } from './tokens.service.js';

@Module({
  controllers: [TokensController],
  providers: [TokensRepository, TokensService, LastUsedRecorder],
  exports: [TokensService],
})
export class TokensModule {}
