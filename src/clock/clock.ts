/**
 * The time as the application sees it: injected wherever time matters, so that tests move a
 * clock instead of editing rows. Services ask it; they never call `Date.now()` themselves.
 */
export abstract class Clock {
  /** Milliseconds since the epoch. */
  abstract nowMs(): number;

  now(): Date {
    return new Date(this.nowMs());
  }
}

/** The machine's clock. */
export class SystemClock extends Clock {
  nowMs(): number {
    return Date.now();
  }
}

/** A clock that stands still until it is moved: for tests. */
export class ManualClock extends Clock {
  constructor(private ms = Date.now()) {
    super();
  }

  nowMs(): number {
    return this.ms;
  }

  /** Moves the clock forward (or back, with a negative `ms`). */
  advance(ms: number): void {
    this.ms += ms;
  }

  set(at: Date | number): void {
    this.ms = typeof at === 'number' ? at : at.getTime();
  }
}
