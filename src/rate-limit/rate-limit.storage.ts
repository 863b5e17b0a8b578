import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { Redis } from 'ioredis';

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

export class MemoryRateLimitStorage extends RateLimitStorage implements OnApplicationShutdown {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private readonly sweeper = setInterval(() => this.sweep(), 60_000).unref();

  hit(key: string, windowMs: number): WindowCount {
    const now = Date.now();
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      window = { count: 0, resetAt: now + windowMs };
      this.windows.set(key, window);
    }
    window.count++;
    return { count: window.count, resetMs: window.resetAt - now };
  }

  peek(key: string): WindowCount | null {
    const now = Date.now();
    const window = this.windows.get(key);
    return window && window.resetAt > now
      ? { count: window.count, resetMs: window.resetAt - now }
      : null;
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
      const [count, ttl] = (await this.redis.eval(HIT_SCRIPT, 1, this.prefix + key, windowMs)) as [
        number,
        number,
      ];
      return { count, resetMs: ttl };
    } catch (error) {
      this.logger.warn(`Rate limit not counted: ${String(error)}`);
      return { count: 0, resetMs: windowMs };
    }
  }

  async peek(key: string): Promise<WindowCount | null> {
    try {
      const [count, ttl] = await Promise.all([
        this.redis.get(this.prefix + key),
        this.redis.pttl(this.prefix + key),
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
