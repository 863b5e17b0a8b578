import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { AuditService } from '../audit/audit.service.js';
import { TokenExpiryReminders } from '../tokens/token-expiry-reminders.js';

const MINUTE_MS = 60_000;
/** How often expiring tokens are looked for: a reminder leaves at most this late. */
export const EXPIRY_CHECK_MS = 15 * MINUTE_MS;
/** How often the security log drops what is older than AUDIT_RETENTION_DAYS. */
export const AUDIT_PRUNE_MS = 24 * 60 * MINUTE_MS;

/**
 * The server's timed work: expiry reminders every 15 minutes, pruning the security log once a
 * day. Each is safe on any number of instances at once (the reminders claim each step in the
 * database; a prune deletes what any instance may delete). The first run comes 5 to 15 minutes
 * after start, spread so that instances started together do not run together. Timers are
 * unref'd: they never keep a process alive, and stop with it.
 */
@Injectable()
export class MaintenanceSchedule implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Maintenance');
  private readonly timers: NodeJS.Timeout[] = [];
  private running: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly reminders: TokenExpiryReminders,
    private readonly audit: AuditService,
  ) {}

  onApplicationBootstrap(): void {
    const first = 5 * MINUTE_MS + Math.random() * 10 * MINUTE_MS;
    this.every(EXPIRY_CHECK_MS, first, 'token expiry reminders', async () => {
      const { reminded, expired } = await this.reminders.run();
      if (reminded + expired > 0) {
        this.logger.log(
          `Token expiry: ${reminded} reminders enqueued, ${expired} expiries recorded`,
        );
      }
    });
    this.every(AUDIT_PRUNE_MS, first + MINUTE_MS, 'security log pruning', async () => {
      const { deleted } = await this.audit.prune();
      if (deleted > 0) this.logger.log(`Security log: ${deleted} events past retention deleted`);
    });
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    await this.running;
  }

  private every(intervalMs: number, firstMs: number, what: string, job: () => Promise<void>): void {
    const run = (): void => {
      if (this.stopped) return;
      this.running = job()
        .catch((error: unknown) => this.logger.warn(`Could not run ${what}: ${String(error)}`))
        .finally(() => {
          if (!this.stopped) this.timers.push(setTimeout(run, intervalMs).unref());
        });
    };
    this.timers.push(setTimeout(run, firstMs).unref());
  }
}
