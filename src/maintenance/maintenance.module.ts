import { Module } from '@nestjs/common';
import { TokensModule } from '../tokens/tokens.module.js';
import { MaintenanceSchedule } from './maintenance.schedule.js';

/** Timed work of the server (the command line runs the same jobs on demand). */
@Module({
  imports: [TokensModule],
  providers: [MaintenanceSchedule],
})
export class MaintenanceModule {}
