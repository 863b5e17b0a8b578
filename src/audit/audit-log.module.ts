import { Global, Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module.js';
import { AuditEventsRepository } from './audit-events.repository.js';
import { AuditLog } from './audit-log.js';
import { AuditService } from './audit.service.js';

/**
 * The security log, for every feature to record in and for the pages and the command line to
 * read: global, as the mail outbox is, since nearly every feature records.
 */
@Global()
@Module({
  imports: [UsersModule],
  providers: [AuditEventsRepository, AuditLog, AuditService],
  exports: [AuditLog, AuditService],
})
export class AuditLogModule {}
