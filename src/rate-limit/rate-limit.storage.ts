import { Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { Clock, SystemClock } from '../clock/clock.js';
import {
  LIMIT_KINDS,
  type CounterPool,
  type LimitKind,
  type UncountedHits,
} from './limit-kinds.js';

export interface WindowCount {
  /** Hits in the current window, this one included. */
  count: number;
  /** Milliseconds until the window ends and the count starts again. */
  resetMs: number;
}

/**
 * Fixed-window counters, in process or in Redis, each of one kind of limit (limit-kinds.ts: its
 * pool, and what it does with a hit that cannot be counted). `hit` counts and answers in one
 * atomic step: of requests that arrive together, each sees its own count, so comparing that
 * count with the limit lets exactly the allowed number through. A hit that cannot be counted
 * throws LimitsUnavailableError for a limit that refuses then, and counts 0 for one that lets
 * requests through. `release` gives a hit back (a success that should not count, or a request
 * refused without being checked). `peek` only looks.
 */
export abstract class RateLimitStorage {
  /**
   * In process the answer is at hand: no promise, so the request path waits for nothing.
   * `limit`: the count past which the caller refuses, for a limit that refuses when it cannot
   * count (Redis marks the hits up to it, to give one back that was answered as not counted).
   */
  abstract hit(
    key: string,
    windowMs: number,
    kind: LimitKind,
    limit?: number,
  ): WindowCount | Promise<WindowCount>;
  abstract release(key: string, kind: LimitKind): void | Promise<void>;
  abstract peek(key: string, kind: LimitKind): WindowCount | null | Promise<WindowCount | null>;
}

/** Keys longer than this are stored as their hash, so no client decides how much a key holds. */
const KEY_MAX = 64;

/**
 * The key as stored: short keys as they are (readable in Redis), longer ones as a prefix and a
 * SHA-256 digest, whatever a caller built them from.
 */
export function storedKey(key: string): string {
  if (key.length <= KEY_MAX) return key;
  const digest = createHash('sha256').update(key).digest('base64url');
  return `${key.slice(0, KEY_MAX - 44)}#${digest}`;
}

interface Window {
  count: number;
  resetAt: number;
}

/** A full security pool answers as a window over every limit: the attempt is refused. */
const NO_ROOM = Number.MAX_SAFE_INTEGER;
/** A full security pool looks for ended windows at most this often. */
const SWEEP_WHEN_FULL_MS = 1_000;

/**
 * Counters in process, for one instance, in two pools of at most `maxKeys` windows each.
 * - `traffic`: a new window past the bound evicts the oldest (a Map keeps insertion order, and
 *   a window is re-inserted when it starts again), so a flood of distinct keys costs a bounded
 *   amount of memory and at worst forgets an old count. A window given back to zero stays until
 *   it ends: the API reserves and gives back a client's attempt on every valid request, and
 *   dropping the window each time made the map insert and delete the same key on every one.
 * - `security`: a live window is never evicted, by other traffic or its own kind. Past the
 *   bound only ended windows make room; when every window is live the new attempt is refused
 *   (fail closed) until the oldest ends, and a warning is logged. A window whose count falls
 *   back to zero is dropped at once, so it holds no room.
 */
export class MemoryRateLimitStorage extends RateLimitStorage {
  private readonly logger = new Logger('RateLimit');
  private readonly pools: Record<CounterPool, Map<string, Window>> = {
    security: new Map(),
    traffic: new Map(),
  };
  private sweptFullAt = 0;
  private warnedFullAt = 0;

  constructor(
    private readonly maxKeys = 50_000,
    private readonly clock: Clock = new SystemClock(),
    private readonly uncounted?: UncountedHits,
  ) {
    super();
  }

  /** Windows held, in both pools. */
  get size(): number {
    return this.pools.security.size + this.pools.traffic.size;
  }

  sizeOf(pool: CounterPool): number {
    return this.pools[pool].size;
  }

  hit(key: string, windowMs: number, kind: LimitKind): WindowCount {
    const now = this.clock.nowMs();
    const pool = LIMIT_KINDS[kind].pool;
    const windows = this.pools[pool];
    const stored = storedKey(key);
    let window = windows.get(stored);
    if (!window || window.resetAt <= now) {
      if (window) windows.delete(stored);
      else if (windows.size >= this.maxKeys && !this.makeRoom(pool, now)) {
        this.uncounted?.(kind, 'refused');
        return { count: NO_ROOM, resetMs: this.oldestResetMs(windows, now) };
      }
      window = { count: 0, resetAt: now + windowMs };
      windows.set(stored, window);
    }
    window.count++;
    return { count: window.count, resetMs: window.resetAt - now };
  }

  release(key: string, kind: LimitKind): void {
    const pool = LIMIT_KINDS[kind].pool;
    const windows = this.pools[pool];
    const stored = storedKey(key);
    const window = windows.get(stored);
    if (!window) return;
    if (window.resetAt <= this.clock.nowMs()) windows.delete(stored);
    else if (--window.count <= 0) {
      window.count = 0;
      if (pool === 'security') windows.delete(stored);
    }
  }

  peek(key: string, kind: LimitKind): WindowCount | null {
    const now = this.clock.nowMs();
    const window = this.pools[LIMIT_KINDS[kind].pool].get(storedKey(key));
    return window && window.resetAt > now
      ? { count: window.count, resetMs: window.resetAt - now }
      : null;
  }

  /** Room for one more window: the traffic pool evicts its oldest; security, only ended ones. */
  private makeRoom(pool: CounterPool, now: number): boolean {
    const windows = this.pools[pool];
    if (pool === 'traffic') {
      const oldest = windows.keys().next();
      if (!oldest.done) windows.delete(oldest.value);
      return true;
    }
    // Oldest first: ended windows are usually at the front.
    for (const [key, window] of windows) {
      if (window.resetAt > now) break;
      windows.delete(key);
    }
    if (windows.size < this.maxKeys) return true;
    if (now - this.sweptFullAt >= SWEEP_WHEN_FULL_MS) {
      this.sweptFullAt = now;
      this.sweepPool(windows, now);
      if (windows.size < this.maxKeys) return true;
    }
    if (now - this.warnedFullAt >= 60_000) {
      this.warnedFullAt = now;
      this.logger.warn(
        `All ${this.maxKeys} security counters are live: new sign-in and two-factor attempts are refused until windows end (RATE_LIMIT_MEMORY_MAX_KEYS, or REDIS_URL)`,
      );
    }
    return false;
  }

  private oldestResetMs(windows: Map<string, Window>, now: number): number {
    let soonest = Infinity;
    for (const window of windows.values()) soonest = Math.min(soonest, window.resetAt);
    return Math.max(1_000, soonest - now);
  }

  /** Drops every window that has ended (the scheduler has it done every minute). */
  sweep(now = this.clock.nowMs()): void {
    this.sweepPool(this.pools.security, now);
    this.sweepPool(this.pools.traffic, now);
  }

  private sweepPool(windows: Map<string, Window>, now: number): void {
    for (const [key, window] of windows) if (window.resetAt <= now) windows.delete(key);
  }
}
