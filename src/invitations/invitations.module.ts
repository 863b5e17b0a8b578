import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { EmailVerificationModule } from '../email-verification/email-verification.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { TeamsModule } from '../teams/teams.module.js';
import { UsersModule } from '../users/users.module.js';
import { InvitationResponsesService } from './invitation-responses.service.js';
import { InvitationsService } from './invitations.service.js';

/** Invitations to teams: sending them, and their addressees' answers. */
@Module({
  imports: [AuthModule, EmailVerificationModule, TeamsModule, UsersModule, RateLimitModule],
  providers: [InvitationsService, InvitationResponsesService],
  exports: [InvitationsService, InvitationResponsesService],
})
export class InvitationsModule {}
