import { Module } from '@nestjs/common';
import { TeamsModule } from '../teams/teams.module.js';
import { TokensModule } from '../tokens/tokens.module.js';
import { ServiceAccountsRepository } from './service-accounts.repository.js';
import { ServiceAccountsService } from './service-accounts.service.js';

/** A team's service accounts: accounts it owns, whose tokens its owners and admins make. */
@Module({
  imports: [TeamsModule, TokensModule],
  providers: [ServiceAccountsRepository, ServiceAccountsService],
  exports: [ServiceAccountsService],
})
export class ServiceAccountsModule {}
