import { Global, Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { EmailVerificationModule } from '../email-verification/email-verification.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { PendingInvitations } from '../teams/pending-invitations.js';
import { TeamsModule } from '../teams/teams.module.js';
import { UsersModule } from '../users/users.module.js';
import { InvitationsController } from './invitations.controller.js';
import { InvitationsService } from './invitations.service.js';
import { TeamInvitationsController } from './team-invitations.controller.js';

/**
 * Invitations to teams. Global only for the port the team page reads its invitations through
 * (teams cannot import this module: it builds on teams).
 */
@Global()
@Module({
  imports: [AuthModule, EmailVerificationModule, TeamsModule, UsersModule, RateLimitModule],
  controllers: [InvitationsController, TeamInvitationsController],
  providers: [InvitationsService, { provide: PendingInvitations, useExisting: InvitationsService }],
  exports: [InvitationsService, PendingInvitations],
})
export class InvitationsModule {}
