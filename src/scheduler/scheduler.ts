import { Inject, Injectable, Logger, Optional, type OnApplicationShutdown } from '@nestjs/common';
import { Clock, type Timer } from '../clock/clock.js';

/** `signal` aborts when the round is abandoned: work that keeps state of its own lets go then. */
type Job = (signal: AbortSignal) => unknown;

/** How long a round may take before it is abandoned (the injection token overrides it). */
export const ROUND_LIMIT_MS = 60_000;
export const SCHEDULER_ROUND_LIMIT = Symbol('SCHEDULER_ROUND_LIMIT');

interface Pending {
  timer: Timer;
  dueAt: number;
  job: Job;
}

/**
 * The one owner of the application's timers: periodic work (pruning, the usage flush, the
 * reminders), work to do soon (writing the security log, sending mail) and retries. Its timers
 * run on the application's clock: the machine's timers in production, and with a test's
 * ManualClock, moving the clock runs what comes due. Every timer is unref'd, so none keeps a
 * process alive, and all stop at shutdown after the work under way has finished. `drain()` lets
 * a test wait until nothing is left to do now, instead of waiting on each background worker in
 * its own way. A round still under way after ROUND_LIMIT_MS (a database or a mail server that
 * stopped answering) is abandoned: logged, its signal aborted, and no longer waited for, so the
 * job runs again when it is next due. That limit is the machine's time, whatever the clock says:
 * like a query's timeout, it bounds how long the process waits, not when work is due.
 */
@Injectable()
export class Scheduler implements OnApplicationShutdown {
  private readonly logger = new Logger('Scheduler');
  private readonly pending = new Map<string, Pending>();
  private readonly periodic = new Map<string, Timer>();
  private readonly running = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    @Optional()
    @Inject(SCHEDULER_ROUND_LIMIT)
    private readonly roundLimitMs: number = ROUND_LIMIT_MS,
  ) {}

  /**
   * Runs `job` every `intervalMs`, first after `firstMs` (the interval by default); a run that
   * is still under way when the next is due makes that one wait for the next interval.
   */
  every(name: string, intervalMs: number, job: Job, firstMs = intervalMs): void {
    if (this.stopped || this.periodic.has(name)) return;
    let busy = false;
    const tick = (): void => {
      if (this.stopped) return;
      this.periodic.set(name, this.clock.startTimer(intervalMs, tick));
      if (busy) return;
      busy = true;
      void this.track(name, job).finally(() => (busy = false));
    };
    this.periodic.set(name, this.clock.startTimer(firstMs, tick));
  }

  /**
   * Runs `job` once, `delayMs` from now (0: as soon as the current work yields). While a job of
   * that name waits, asking again keeps whichever is due first: a wake-up brings a later retry
   * forward, and a retry never postpones a wake-up.
   */
  after(name: string, delayMs: number, job: Job): void {
    if (this.stopped) return;
    const dueAt = this.clock.nowMs() + Math.max(0, delayMs);
    const waiting = this.pending.get(name);
    if (waiting && waiting.dueAt <= dueAt) return;
    waiting?.timer.cancel();
    const timer = this.clock.startTimer(Math.max(0, delayMs), () => this.runPending(name));
    this.pending.set(name, { timer, dueAt, job });
  }

  /**
   * Resolves once no job is running and none is due now: jobs asked for with no delay run at
   * once instead of on the next turn, and so do the ones they ask for in turn. Retries and
   * periodic work that are not due are left alone.
   */
  async drain(): Promise<void> {
    for (;;) {
      const now = this.clock.nowMs();
      const due = [...this.pending.entries()].filter(([, p]) => p.dueAt <= now);
      for (const [name] of due) this.runPending(name);
      if (this.running.size === 0) return;
      await Promise.allSettled([...this.running]);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    for (const timer of this.periodic.values()) timer.cancel();
    for (const pending of this.pending.values()) pending.timer.cancel();
    this.periodic.clear();
    this.pending.clear();
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  private runPending(name: string): void {
    const pending = this.pending.get(name);
    if (!pending) return;
    pending.timer.cancel();
    this.pending.delete(name);
    void this.track(name, pending.job);
  }

  /**
   * Runs a job, logging (never throwing) what it throws, and keeps it until it ends or is
   * abandoned at the round limit.
   */
  private track(name: string, job: Job): Promise<void> {
    const round = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const work = Promise.resolve()
      .then(() => job(round.signal))
      .then(
        () => undefined,
        (error: unknown) => {
          if (error !== round.signal.reason) this.logger.warn(`${name} failed: ${String(error)}`);
        },
      );
    const limit = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.logger.warn(
          `${name} did not finish within ${this.roundLimitMs / 1000} s: abandoned, it runs again when next due`,
        );
        round.abort(new Error(`${name} abandoned after ${this.roundLimitMs / 1000} s`));
        resolve();
      }, this.roundLimitMs).unref();
    });
    const run = Promise.race([work, limit]).finally(() => {
      clearTimeout(timer);
      this.running.delete(run);
    });
    this.running.add(run);
    return run;
  }
}

/**
 * `work`, or a rejection with the round's reason as soon as the scheduler abandons the round:
 * for a job whose own state (a "busy" flag) must not outlive an abandoned round.
 */
export function untilAbandoned<T>(signal: AbortSignal, work: Promise<T>): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  let onAbort!: () => void;
  const abandoned = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([work, abandoned]).finally(() =>
    signal.removeEventListener('abort', onAbort),
  );
}
