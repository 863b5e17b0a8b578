import { isoMicrosOfMachine } from './micro-time.js';

/** A timer started on a clock: `cancel()` stops it if it has not fired. */
export interface Timer {
  cancel(): void;
}

/**
 * The time as the application sees it: injected wherever time matters, so that tests move a
 * clock instead of editing rows. Services ask it; they never call `Date.now()` themselves. The
 * scheduler starts its timers on it, so moving a test's clock runs the work that comes due.
 */
export abstract class Clock {
  /** Milliseconds since the epoch. */
  abstract nowMs(): number;

  /** The time as UTC ISO 8601 with six fractional digits (the API envelope's timestamp). */
  abstract isoMicros(): string;

  /**
   * Calls `fire` once, when `delayMs` have passed on this clock. The timer keeps no process
   * alive.
   */
  abstract startTimer(delayMs: number, fire: () => void): Timer;

  now(): Date {
    return new Date(this.nowMs());
  }
}

/** The machine's clock, with the machine's timers. */
export class SystemClock extends Clock {
  nowMs(): number {
    return Date.now();
  }

  isoMicros(): string {
    return isoMicrosOfMachine();
  }

  startTimer(delayMs: number, fire: () => void): Timer {
    const timer = setTimeout(fire, delayMs).unref();
    return { cancel: () => clearTimeout(timer) };
  }
}

interface ManualTimer {
  dueAt: number;
  fire: () => void;
}

/**
 * A clock that stands still until it is moved: for tests. Moved forward, time passes for its
 * timers: `advance()` and `set()` fire, in the order they are due, every timer whose time has
 * come, each once however far the clock jumps (as a machine waking from sleep does), before they
 * return. Moved back, no time passes: each timer keeps the delay it had left, as the machine's
 * timers do when its clock is set back. A timer due at once (no delay) fires on the next turn of
 * the event loop, as the machine's would.
 */
export class ManualClock extends Clock {
  private readonly timers = new Set<ManualTimer>();
  private soon: NodeJS.Immediate | undefined;

  constructor(private ms = Date.now()) {
    super();
  }

  nowMs(): number {
    return this.ms;
  }

  /** Whole milliseconds: the microseconds are always 000. */
  isoMicros(): string {
    return `${new Date(this.ms).toISOString().slice(0, -1)}000Z`;
  }

  startTimer(delayMs: number, fire: () => void): Timer {
    const timer = { dueAt: this.ms + Math.max(0, delayMs), fire };
    this.timers.add(timer);
    if (timer.dueAt <= this.ms) {
      this.soon ??= setImmediate(() => {
        this.soon = undefined;
        this.fireDue();
      }).unref();
    }
    return { cancel: () => this.timers.delete(timer) };
  }

  /** Moves the clock forward (or back, with a negative `ms`), firing the timers now due. */
  advance(ms: number): void {
    this.set(this.ms + ms);
  }

  /** Sets the clock to `at`, firing the timers now due. */
  set(at: Date | number): void {
    const ms = typeof at === 'number' ? at : at.getTime();
    if (ms < this.ms) for (const timer of this.timers) timer.dueAt -= this.ms - ms;
    this.ms = ms;
    this.fireDue();
  }

  private fireDue(): void {
    for (;;) {
      let next: ManualTimer | undefined;
      for (const timer of this.timers) {
        if (timer.dueAt <= this.ms && (!next || timer.dueAt < next.dueAt)) next = timer;
      }
      if (!next) return;
      this.timers.delete(next);
      next.fire();
    }
  }
}
