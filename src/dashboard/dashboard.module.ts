import { Module } from '@nestjs/common';
import { TeamsModule } from '../teams/teams.module.js';
import { DashboardController } from './dashboard.controller.js';

@Module({
  imports: [TeamsModule],
  controllers: [DashboardController],
})
export class DashboardModule {}
