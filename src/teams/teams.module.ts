import { Module } from '@nestjs/common';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { UsersModule } from '../users/users.module.js';
import { TeamNotices } from './team-notices.js';
import { TeamsRepository } from './teams.repository.js';
import { TeamsService } from './teams.service.js';

@Module({
  imports: [UsersModule, RateLimitModule],
  // In this order: /teams/switch is matched before /teams/:id.
  providers: [TeamsRepository, TeamsService, TeamNotices],
  exports: [TeamsService],
})
export class TeamsModule {}
