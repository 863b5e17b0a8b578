import { RateLimitedError } from './rate-limit.errors.js';
import type { CounterPool, RateLimitStorage, WindowCount } from './rate-limit.storage.js';

export interface Counter {
  key: string;
  windowMs: number;
}

/**
 * An attempt counted before it is checked. It stays counted when the check fails; `giveBack`
 * takes it off every counter when it should not count (it succeeded, or could not be checked).
 */
export class ReservedAttempt {
  /** For limits that are switched off: nothing was counted. */
  static readonly uncounted = new ReservedAttempt(null, 'traffic', []);

  constructor(
    private readonly storage: RateLimitStorage | null,
    private readonly pool: CounterPool,
    private keys: string[],
  ) {}

  async giveBack(): Promise<void> {
    const { storage, keys } = this;
    this.keys = [];
    if (storage) await Promise.all(keys.map((key) => storage.release(key, this.pool)));
  }
}

/**
 * Counts an attempt on every counter at once (each hit is one atomic step), then asks `refuse`
 * whether the counts allow it. A refused attempt is given back and thrown: it was not checked.
 * Of N attempts that arrive together, each sees its own counts, so no more than the limit pass.
 */
export async function reserveAttempt(
  storage: RateLimitStorage,
  pool: CounterPool,
  counters: Counter[],
  refuse: (windows: WindowCount[]) => WindowCount | undefined,
  refusal: (retryAfterSeconds: number) => Error = (s) => new RateLimitedError(s),
): Promise<ReservedAttempt> {
  const windows = await Promise.all(counters.map((c) => storage.hit(c.key, c.windowMs, pool)));
  const attempt = new ReservedAttempt(
    storage,
    pool,
    counters.map((c) => c.key),
  );
  const over = refuse(windows);
  if (over) {
    await attempt.giveBack();
    throw refusal(Math.max(1, Math.ceil(over.resetMs / 1000)));
  }
  return attempt;
}
