import { Module } from '@nestjs/common';
import { InvitationsModule } from '../invitations/invitations.module.js';
import { TeamsModule } from '../teams/teams.module.js';
import { TeamPageController } from './team-page.controller.js';
import { TokensModule } from '../tokens/tokens.module.js';
import { TeamTokensController } from './team-tokens.controller.js';
import { TeamTokensService } from './team-tokens.service.js';

/** Pages that combine features (teams with invitations, teams with tokens), above them. */
@Module({
  imports: [TeamsModule, InvitationsModule, TokensModule],
  controllers: [TeamPageController, TeamTokensController],
  providers: [TeamTokensService],
  exports: [TeamTokensService],
})
export class TeamPageModule {}
