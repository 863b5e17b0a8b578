import { Module } from '@nestjs/common';
import { TeamsModule } from '../teams/teams.module.js';
import { AuditLogController } from './audit-log.controller.js';

/** The security log's pages (recording and reading are AuditLogModule's, for every feature). */
@Module({
  imports: [TeamsModule],
  controllers: [AuditLogController],
})
export class AuditModule {}
