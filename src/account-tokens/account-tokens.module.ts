import { Module } from '@nestjs/common';
import { AccountTokensRepository } from './account-tokens.repository.js';
import { AccountTokens } from './account-tokens.service.js';

@Module({
  providers: [AccountTokensRepository, AccountTokens],
  exports: [AccountTokens],
})
export class AccountTokensModule {}
