import { Module } from '@nestjs/common';
import { TeamsModule } from '../teams/teams.module.js';
import { TokensModule } from '../tokens/tokens.module.js';
import { TeamTokensService } from './team-tokens.service.js';

/** A team's tokens as its owners and admins govern them: the teams feature over the tokens'. */
@Module({
  imports: [TeamsModule, TokensModule],
  providers: [TeamTokensService],
  exports: [TeamTokensService],
})
export class TeamTokensModule {}
