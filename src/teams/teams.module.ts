import { Module } from '@nestjs/common';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { UsersModule } from '../users/users.module.js';
import { TeamMembersService } from './team-members.service.js';
import { TeamNotices } from './team-notices.js';
import { TeamPoliciesService } from './team-policies.service.js';
import { TeamsRepository } from './teams.repository.js';
import { TeamsService } from './teams.service.js';

@Module({
  imports: [UsersModule, RateLimitModule],
  providers: [TeamsRepository, TeamsService, TeamMembersService, TeamPoliciesService, TeamNotices],
  exports: [TeamsService, TeamMembersService, TeamPoliciesService],
})
export class TeamsModule {}
