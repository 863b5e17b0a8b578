import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { AuditService } from '../audit/audit.service.js';
import { Scheduler } from '../scheduler/scheduler.js';
import { TokenExpiryReminders } from '../tokens/token-expiry-reminders.js';

const MINUTE_MS = 60_000;
/** How often expiring tokens are looked for: a reminder leaves at most this late. */
export const EXPIRY_CHECK_MS = 15 * MINUTE_MS;
/** How often the security log drops what is older than AUDIT_RETENTION_DAYS. */
export const AUDIT_PRUNE_MS = 24 * 60 * MINUTE_MS;

/**
 * The server's timed upkeep: expiry reminders every 15 minutes, pruning the security log once
 * a day. Each is safe on any number of instances at once (the reminders claim each step in the
 * database; a prune deletes what any instance may delete). The first run comes 5 to 15 minutes
 * after start, spread so that instances started together do not run together. The command
 * line, which runs them on demand, has none of this.
 */
@Injectable()
export class MaintenanceSchedule implements OnApplicationBootstrap {
  private readonly logger = new Logger('Maintenance');

  constructor(
    private readonly scheduler: Scheduler,
    private readonly reminders: TokenExpiryReminders,
    private readonly audit: AuditService,
  ) {}

  onApplicationBootstrap(): void {
    const first = 5 * MINUTE_MS + Math.random() * 10 * MINUTE_MS;
    this.scheduler.every(
      'token expiry reminders',
      EXPIRY_CHECK_MS,
      async () => {
        const { reminded, expired } = await this.reminders.run();
        if (reminded + expired > 0) {
          this.logger.log(
            `Token expiry: ${reminded} reminders enqueued, ${expired} expiries recorded`,
          );
        }
      },
      first,
    );
    this.scheduler.every(
      'security log pruning',
      AUDIT_PRUNE_MS,
      async () => {
        const { deleted } = await this.audit.prune();
        if (deleted > 0) this.logger.log(`Security log: ${deleted} events past retention deleted`);
      },
      first + MINUTE_MS,
    );
  }
}
