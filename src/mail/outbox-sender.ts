import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { Transactions } from '../database/transactions.js';
import { Metrics } from '../metrics/metrics.js';
import type { MailMessage } from './mail-message.js';
import { MailTransport } from './mail-transport.js';
import type { OutboxMessage } from './outbox-message.entity.js';
import { OutboxRepository } from './outbox.repository.js';
import { retryDelayMs } from './retry-delay.js';
import { Clock } from '../clock/clock.js';
import { Scheduler, untilAbandoned } from '../scheduler/scheduler.js';
import { OnEvent } from '../events/events.js';
import { Mailer } from './mailer.js';

const BATCH = 10;
/** Longer than a send can take (the SMTP timeouts), so a lease lapses only when its holder died. */
const LEASE_MS = 2 * 60_000;
const PRUNE_EVERY_MS = 3_600_000;
const KEEP_FINISHED_MS = 30 * 86_400_000;
const SEND_JOB = 'mail sending';
/** The sender looks at the outbox on its own at most once a second (a commit wakes it at once). */
const MIN_LOOK_MS = 1_000;

/**
 * Delivers the outbox: woken after each commit that enqueued mail, and by a timer when the outbox
 * says a message may next be claimed (a retry, a lease that lapses) and, at the latest, after
 * MAIL_POLL_SECONDS for messages no one woke it for (enqueued by a stopped instance). Each
 * message is claimed with a lease before it is sent, so several instances send it once; a
 * failed try is retried later, waiting twice as long each time, and after MAIL_MAX_ATTEMPTS the
 * message is marked failed.
 */
@Injectable()
export class OutboxSender implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Mail');
  /** Names this process's leases. */
  private readonly owner = randomUUID();
  private busy = false;
  private wokenWhileBusy = false;
  private stopped = false;
  private prunedAt = 0;

  constructor(
    private readonly messages: OutboxRepository,
    private readonly mailer: Mailer,
    private readonly transport: MailTransport,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly scheduler: Scheduler,
    @Inject(CONFIG) private readonly config: Config,
    @Optional() private readonly metrics?: Metrics,
  ) {}

  onApplicationBootstrap(): void {
    this.wake();
  }

  /** Sends everything due, now or as soon as the current round ends (and after each commit that enqueued mail). */
  @OnEvent('mail.enqueued', { afterCommit: true })
  wake(): void {
    if (!this.stopped) this.scheduler.after(SEND_JOB, 0, (signal) => this.round(signal));
  }

  /** Stops taking messages; the one being sent finishes, those claimed after it are handed back. */
  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    await this.scheduler.drain();
    this.transport.close();
  }

  /**
   * One round at a time: a wake-up during one starts another right after it. A round the
   * scheduler abandons ends here at once, so a stalled round never stops the outbox; its work
   * hands back what it claimed and has not sent when (if ever) it takes its next step.
   */
  private async round(signal: AbortSignal): Promise<void> {
    if (this.stopped) return;
    if (this.busy) {
      this.wokenWhileBusy = true;
      return;
    }
    this.busy = true;
    let nextLookMs: number;
    try {
      nextLookMs = await untilAbandoned(signal, this.sendDue(signal));
    } catch (error) {
      // The database failed us: the messages wait where they are, and the next look comes as
      // soon as a first retry would.
      nextLookMs = this.config.mail.retrySeconds * 1000;
      this.logger.warn(
        `Could not read the outbox: ${reason(error)}; looking again in ${Math.round(nextLookMs / 1000)} s`,
      );
    } finally {
      this.busy = false;
    }
    if (this.wokenWhileBusy) {
      this.wokenWhileBusy = false;
      this.wake();
    } else if (!this.stopped) {
      this.scheduler.after(SEND_JOB, nextLookMs, (next) => this.round(next));
    }
  }

  /**
   * How long until the next look on the sender's own: when the outbox says a message may next be
   * claimed (a retry, or a lease that lapses), at most MAIL_POLL_SECONDS (for messages another
   * instance enqueued and did not send) and at least a second (a message due now that this round
   * could not claim is held by another instance's claim).
   */
  private async nextLookMs(): Promise<number> {
    const pollMs = this.config.mail.pollSeconds * 1000;
    const next = await this.transactions.run((m) => this.messages.nextChance(m));
    if (!next) return pollMs;
    return Math.min(pollMs, Math.max(MIN_LOOK_MS, next.getTime() - this.clock.nowMs()));
  }

  private async sendDue(signal: AbortSignal): Promise<number> {
    await this.drain(signal);
    return this.nextLookMs();
  }

  private async drain(signal: AbortSignal): Promise<void> {
    await this.pruneNowAndThen();
    while (!this.stopped && !signal.aborted) {
      const now = this.clock.now();
      const batch = await this.transactions.run(
        (m) =>
          this.messages.claimDue(m, {
            now,
            limit: BATCH,
            owner: this.owner,
            leaseUntil: new Date(now.getTime() + LEASE_MS),
          }),
        { isolation: 'READ COMMITTED' },
      );
      if (batch.length === 0) return;
      for (const [i, message] of batch.entries()) {
        if (this.stopped || signal.aborted) {
          const ids = batch.slice(i).map((m) => m.id);
          await this.transactions.run((m) => this.messages.release(m, ids, this.owner));
          return;
        }
        await this.deliver(message);
      }
    }
  }

  private async deliver(message: OutboxMessage): Promise<void> {
    let mail: MailMessage | null;
    try {
      const compose = this.mailer.composerOf(message.kind);
      if (!compose) throw new Error(`no composer for "${message.kind}" messages`);
      const params = JSON.parse(message.params) as Record<string, unknown>;
      mail = await this.transactions.run(async (m) => {
        const lease = new Date(this.clock.nowMs() + LEASE_MS);
        // Withdrawn meanwhile: nothing to make.
        if (!(await this.messages.renewIfPending(m, message, this.owner, lease))) return null;
        return compose(m, { to: message.recipient, params });
      });
      if (mail) await this.transport.send(mail);
    } catch (error) {
      await this.tryLater(message, error);
      return;
    }
    const status = mail ? 'sent' : 'dropped';
    await this.transactions.run((m) =>
      this.messages.finish(m, message, this.owner, { status, at: this.clock.now() }),
    );
    this.metrics?.mail(status);
  }

  private async tryLater(message: OutboxMessage, error: unknown): Promise<void> {
    const why = reason(error);
    const what = `${message.kind} message ${message.id}`;
    if (message.attempts >= this.config.mail.maxAttempts) {
      await this.transactions.run((m) =>
        this.messages.finish(m, message, this.owner, {
          status: 'failed',
          at: this.clock.now(),
          error: why,
        }),
      );
      this.metrics?.mail('failed');
      this.logger.error(`Gave up on ${what} after ${message.attempts} attempts: ${why}`);
      return;
    }
    const delay = retryDelayMs(message.attempts, this.config.mail.retrySeconds * 1000);
    const at = new Date(this.clock.nowMs() + delay);
    await this.transactions.run((m) => this.messages.retryLater(m, message, this.owner, at, why));
    this.metrics?.mail('retried');
    this.logger.warn(
      `Could not send ${what} (attempt ${message.attempts} of ${this.config.mail.maxAttempts}); next try in ${Math.round(delay / 1000)} s: ${why}`,
    );
  }

  private async pruneNowAndThen(): Promise<void> {
    if (this.clock.nowMs() - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = this.clock.nowMs();
    const before = new Date(this.clock.nowMs() - KEEP_FINISHED_MS);
    await this.transactions.run((m) => this.messages.pruneFinished(m, before));
  }
}

/** What went wrong, in one line that fits the outbox's column; SMTP errors carry no secret. */
function reason(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/\s+/g, ' ').slice(0, 500);
}
