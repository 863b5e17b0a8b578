import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { createHash } from 'node:crypto';

export interface WindowCount {
  /** Hits in the current window, this one included. */
  count: number;
  /** Milliseconds until the window ends and the count starts again. */
  resetMs: number;
}

/**
 * Fixed-window counters, in process or in Redis. `peek` lets the API refuse an IP that has used
 * up its failures before its next token is even looked up.
 */
export abstract class RateLimitStorage {
  /** In process the answer is at hand: no promise, so the request path waits for nothing. */
  abstract hit(key: string, windowMs: number): WindowCount | Promise<WindowCount>;
  abstract peek(key: string): WindowCount | null | Promise<WindowCount | null>;
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

/**
 * Counters in process, for one instance. At most `maxKeys` windows are kept: a new one past that
 * evicts the oldest window first (a Map keeps insertion order, and a window is re-inserted when
 * it starts again), so a flood of distinct keys costs a bounded amount of memory.
 */
export class MemoryRateLimitStorage extends RateLimitStorage implements OnApplicationShutdown {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private readonly sweeper = setInterval(() => this.sweep(), 60_000).unref();

  constructor(private readonly maxKeys = 50_000) {
    super();
  }

  get size(): number {
    return this.windows.size;
  }

  hit(key: string, windowMs: number): WindowCount {
    const now = Date.now();
    const stored = storedKey(key);
    let window = this.windows.get(stored);
    if (!window || window.resetAt <= now) {
      if (window) this.windows.delete(stored);
      else if (this.windows.size >= this.maxKeys) this.evictOldest();
      window = { count: 0, resetAt: now + windowMs };
      this.windows.set(stored, window);
    }
    window.count++;
    return { count: window.count, resetMs: window.resetAt - now };
  }

  peek(key: string): WindowCount | null {
    const now = Date.now();
    const window = this.windows.get(storedKey(key));
    return window && window.resetAt > now
      ? { count: window.count, resetMs: window.resetAt - now }
      : null;
  }

  private evictOldest(): void {
    const oldest = this.windows.keys().next();
    if (!oldest.done) this.windows.delete(oldest.value);
  }

  private sweep(now = Date.now()): void {
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
  }

  onApplicationShutdown(): void {
    clearInterval(this.sweeper);
  }
}

// One round trip: count the hit and start the window's clock on the first one.
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {count, ttl}`;

/** Counters in Redis, shared by every instance. */
export class RedisRateLimitStorage extends RateLimitStorage implements OnApplicationShutdown {
  private readonly logger = new Logger('RateLimit');

  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'tessera:rl:',
  ) {
    super();
    // Redis being down must not take the service down with it: limits fail open, loudly.
    redis.on('error', (error: Error) => this.logger.warn(`Redis: ${error.message}`));
  }

  /** ioredis is loaded only when Redis is configured. */
  static async connect(url: string, prefix?: string): Promise<RedisRateLimitStorage> {
    const { Redis } = await import('ioredis');
    return new RedisRateLimitStorage(
      new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: true, connectTimeout: 1000 }),
      prefix,
    );
  }

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    try {
      const [count, ttl] = (await this.redis.eval(
        HIT_SCRIPT,
        1,
        this.prefix + storedKey(key),
        windowMs,
      )) as [number, number];
      return { count, resetMs: ttl };
    } catch (error) {
      this.logger.warn(`Rate limit not counted: ${String(error)}`);
      return { count: 0, resetMs: windowMs };
    }
  }

  async peek(key: string): Promise<WindowCount | null> {
    try {
      const [count, ttl] = await Promise.all([
        this.redis.get(this.prefix + storedKey(key)),
        this.redis.pttl(this.prefix + storedKey(key)),
      ]);
      return count === null || ttl < 0 ? null : { count: Number(count), resetMs: ttl };
    } catch (error) {
      this.logger.warn(`Rate limit not checked: ${String(error)}`);
      return null;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
