import { Module } from '@nestjs/common';
import { InvitationsModule } from '../invitations/invitations.module.js';
import { TeamsModule } from '../teams/teams.module.js';
import { TeamPageController } from './team-page.controller.js';
import { TokensModule } from '../tokens/tokens.module.js';
import { TeamTokensController } from './team-tokens.controller.js';
import { TeamTokensService } from './team-tokens.service.js';
import { ServiceAccountsModule } from '../service-accounts/service-accounts.module.js';
import { ServiceAccountsController } from './service-accounts.controller.js';
import { TeamChangesController } from './team-changes.controller.js';
import { WebhooksModule } from '../webhooks/webhooks.module.js';
import { WebhooksController } from './webhooks.controller.js';

/** Pages that combine features (teams with invitations, teams with tokens), above them. */
@Module({
  imports: [TeamsModule, InvitationsModule, TokensModule, ServiceAccountsModule, WebhooksModule],
  controllers: [
    TeamPageController,
    TeamTokensController,
    ServiceAccountsController,
    TeamChangesController,
    WebhooksController,
  ],
  providers: [TeamTokensService],
  exports: [TeamTokensService],
})
export class TeamPageModule {}
