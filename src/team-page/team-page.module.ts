import { Module } from '@nestjs/common';
import { InvitationsModule } from '../invitations/invitations.module.js';
import { TeamsModule } from '../teams/teams.module.js';
import { TeamPageController } from './team-page.controller.js';

/** A page that combines two features, above both of them. */
@Module({
  imports: [TeamsModule, InvitationsModule],
  controllers: [TeamPageController],
})
export class TeamPageModule {}
