import { setImmediate as nextTurn } from 'node:timers/promises';
import { ManualClock } from '../../src/clock/clock.js';

/**
 * One ManualClock per instance of a deployment, moved together: each instance's timers fire in
 * a turn of the event loop of their own, as on separate machines. With one clock shared, the
 * timers of both instances fire in one turn, and on SQLite (one file, one connection per
 * instance, in one process) a transaction begun by one instance's job can find the other's
 * open in the same turn and wait on it synchronously, which never ends in one thread.
 */
export class ClusterClock {
  readonly clocks: ManualClock[];

  constructor(count: number, at = Date.now()) {
    this.clocks = Array.from({ length: count }, () => new ManualClock(at));
  }

  /** The first instance's clock (they all show the same time). */
  get first(): ManualClock {
    return this.clocks[0];
  }

  nowMs(): number {
    return this.first.nowMs();
  }

  now(): Date {
    return this.first.now();
  }

  /** Moves every instance's clock forward by `ms`, one after the other, each in its own turn. */
  async advance(ms: number): Promise<void> {
    for (const clock of this.clocks) {
      clock.advance(ms);
      await nextTurn();
    }
  }
}
