import { Module } from '@nestjs/common';
import { InvitationsModule } from '../invitations/invitations.module.js';
import { TeamsModule } from '../teams/teams.module.js';
import { DashboardController } from './dashboard.controller.js';

/** The signed-in person's home: their teams and the invitations waiting for them. */
@Module({
  imports: [TeamsModule, InvitationsModule],
  controllers: [DashboardController],
})
export class DashboardModule {}
