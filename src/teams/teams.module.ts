import { Module } from '@nestjs/common';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { UsersModule } from '../users/users.module.js';
import { TeamSettingsController } from './team-settings.controller.js';
import { TeamNotices } from './team-notices.js';
import { TeamsController } from './teams.controller.js';
import { TeamsRepository } from './teams.repository.js';
import { TeamsService } from './teams.service.js';

@Module({
  imports: [UsersModule, RateLimitModule],
  // In this order: /teams/switch is matched before /teams/:id.
  controllers: [TeamsController, TeamSettingsController],
  providers: [TeamsRepository, TeamsService, TeamNotices],
  exports: [TeamsService],
})
export class TeamsModule {}
