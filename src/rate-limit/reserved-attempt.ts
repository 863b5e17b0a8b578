import type { LimitKind } from './limit-kinds.js';
import { RateLimitedError } from './rate-limit.errors.js';
import type { RateLimitStorage, WindowCount } from './rate-limit.storage.js';

export interface Counter {
  key: string;
  windowMs: number;
  /** The count past which the attempt is refused (see RateLimitStorage.hit). */
  limit: number;
}

/**
 * An attempt counted before it is checked. It stays counted when the check fails; `giveBack`
 * takes it off every counter when it should not count (it succeeded, or could not be checked).
 */
export class ReservedAttempt {
  /** For limits that are switched off: nothing was counted. */
  static readonly uncounted = new ReservedAttempt(null, 'sign-in', []);

  constructor(
    private readonly storage: RateLimitStorage | null,
    private readonly kind: LimitKind,
    private keys: string[],
  ) {}

  async giveBack(): Promise<void> {
    const { storage, keys } = this;
    this.keys = [];
    if (storage) await Promise.all(keys.map((key) => storage.release(key, this.kind)));
  }
}

/**
 * Counts an attempt on every counter at once (each hit is one atomic step), then asks `refuse`
 * whether the counts allow it. A refused attempt is given back and thrown: it was not checked.
 * Of N attempts that arrive together, each sees its own counts, so no more than the limit pass.
 * When a counter cannot count it (Redis away) the attempt is given back on the others and the
 * storage's refusal thrown: it is not checked either.
 */
export async function reserveAttempt(
  storage: RateLimitStorage,
  kind: LimitKind,
  counters: Counter[],
  refuse: (windows: WindowCount[]) => WindowCount | undefined,
  refusal: (retryAfterSeconds: number) => Error = (s) => new RateLimitedError(s),
): Promise<ReservedAttempt> {
  const hits = await Promise.allSettled(
    counters.map((c) => storage.hit(c.key, c.windowMs, kind, c.limit)),
  );
  const failed = hits.find((h) => h.status === 'rejected');
  if (failed) {
    const counted = counters.filter((_, i) => hits[i].status === 'fulfilled').map((c) => c.key);
    await new ReservedAttempt(storage, kind, counted).giveBack();
    throw failed.reason;
  }
  const windows = hits.map((h) => (h as PromiseFulfilledResult<WindowCount>).value);
  const attempt = new ReservedAttempt(
    storage,
    kind,
    counters.map((c) => c.key),
  );
  const over = refuse(windows);
  if (over) {
    await attempt.giveBack();
    throw refusal(Math.max(1, Math.ceil(over.resetMs / 1000)));
  }
  return attempt;
}
