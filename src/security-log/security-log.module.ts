import { Module } from '@nestjs/common';
import { TeamsModule } from '../teams/teams.module.js';
import { SecurityLogController } from './security-log.controller.js';

/** The security log's pages: a person's own, and a team's for its owner and admins. */
@Module({
  imports: [TeamsModule],
  controllers: [SecurityLogController],
})
export class SecurityLogModule {}
