import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { Redis, RedisOptions } from 'ioredis';
import { randomUUID } from 'node:crypto';
import {
  LIMIT_KINDS,
  uncountedOutcomeOf,
  type LimitKind,
  type UncountedHits,
} from './limit-kinds.js';
import { LimitsUnavailableError } from './rate-limit.errors.js';
import { RateLimitStorage, storedKey, type WindowCount } from './rate-limit.storage.js';

// One round trip: count the hit and start the window's clock on the first one.
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {count, ttl}`;

/**
 * The hit of a limit that refuses when it cannot count. A call that timed out was answered 503
 * as not counted, yet Redis may still run it late (busy, or its connection slow): the hits up to
 * the limit (ARGV[3]) are marked counted, by the attempt's id (ARGV[2]) in the counter's hash of
 * attempts (KEYS[2], which ends with the window), so that such an attempt can be given back. One
 * given up before it arrives is not counted. Past the limit nothing is marked: those hits are
 * refused anyway, so a flood of refused attempts costs no more than the counter.
 */
const MARKED_HIT_SCRIPT = `
if redis.call('HGET', KEYS[2], ARGV[2]) == 'given-up' then return {0, 0} end
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
if count <= tonumber(ARGV[3]) then
  redis.call('HSET', KEYS[2], ARGV[2], 'counted')
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return {count, ttl}`;

// An attempt answered as not counted: its hit given back if it was counted, and refused if it
// comes later; once only, however often it is given up.
const GIVE_UP_SCRIPT = `
local state = redis.call('HGET', KEYS[2], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[2], 'given-up')
if redis.call('PTTL', KEYS[2]) < 0 then redis.call('PEXPIRE', KEYS[2], ARGV[1]) end
if state ~= 'counted' then return 0 end
if redis.call('PTTL', KEYS[1]) <= 0 then return 0 end
local count = redis.call('DECR', KEYS[1])
if count <= 0 then redis.call('DEL', KEYS[1]) end
return 1`;

/** Attempts waiting to be given up while Redis is away; the oldest beyond stay counted. */
const GIVE_UPS_MAX = 10_000;

/**
 * What ioredis answers a call made while it has no connection: the command was never sent, so
 * there is nothing to give up.
 */
const NOT_SENT = /enableOfflineQueue/;

interface GivenUp {
  counter: string;
  attempt: string;
  windowMs: number;
}

// Gives one hit back, only to a window that still runs; a window back at zero is deleted.
const RELEASE_SCRIPT = `
if redis.call('PTTL', KEYS[1]) <= 0 then return 0 end
local count = redis.call('DECR', KEYS[1])
if count <= 0 then redis.call('DEL', KEYS[1]) end
return count`;

/** The hash of a counter's marked attempts (MARKED_HIT_SCRIPT). */
function attemptsOf(counter: string): string {
  return `${counter}:attempts`;
}

/**
 * ioredis settings that bound every call by `timeoutMs`: an unanswered command fails then, and
 * the connection it was sent on is destroyed and made anew (socketTimeout), so no command is
 * sent again after reconnecting (autoResendUnfulfilledCommands) to count an attempt that was
 * already answered as not counted. One Redis read late is given up instead (GIVE_UP_SCRIPT).
 * While there is no connection a call fails at once (no offline queue, no retries) instead of
 * waiting for Redis to come back.
 */
export function redisOptions(timeoutMs: number): RedisOptions {
  return {
    commandTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    connectTimeout: Math.max(timeoutMs, 1_000),
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    // RESP2, which every Redis and proxy in front of one speaks; nothing here needs RESP3.
    protocol: 2,
  };
}

export interface RedisStorageOptions {
  url: string;
  prefix: string;
  /** REDIS_COMMAND_TIMEOUT_MS: the longest any Redis call may take. */
  timeoutMs: number;
  /** Told of each hit that could not be counted (the metrics). */
  uncounted?: UncountedHits;
}

/**
 * Counters in Redis, shared by every instance. Redis's own memory settings bound them, and it
 * must run with `maxmemory-policy noeviction` (an evicted counter is a limit started afresh):
 * the policy is read at every connection and the log says when it is anything else. A hit that
 * cannot be counted (Redis down, black-holed, or out of memory) is refused or let through as
 * its kind says (limit-kinds.ts), and told to `uncounted`; the log says once when Redis is lost
 * and once when it answers again.
 */
export class RedisRateLimitStorage extends RateLimitStorage implements OnApplicationShutdown {
  private readonly logger = new Logger('RateLimit');
  /** A call or the connection failed, and nothing has succeeded since. */
  private lost = false;
  /** The latest reading of maxmemory-policy, from the latest connection. */
  policyChecked: Promise<string> = Promise.resolve('unknown');
  /** Attempts answered as not counted, to give up once Redis answers (insertion order). */
  private readonly givenUp = new Map<string, GivenUp>();
  private givingUp?: Promise<void>;

  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'tessera:rl:',
    private readonly uncounted?: UncountedHits,
  ) {
    super();
    redis.on('error', (error: Error) => this.unreachable(error));
    redis.on('ready', () => {
      this.reachable();
      this.policyChecked = this.checkEvictionPolicy();
      void this.giveUpWaiting();
    });
  }

  /**
   * ioredis is loaded only when Redis is configured. Waits for the first connection to be ready
   * or to fail (bounded by the timeouts): a Redis that is down at start makes the limits that
   * refuse refuse, and the app starts all the same.
   */
  static async connect(options: RedisStorageOptions): Promise<RedisRateLimitStorage> {
    const { Redis } = await import('ioredis');
    const redis = new Redis(options.url, redisOptions(options.timeoutMs));
    const storage = new RedisRateLimitStorage(redis, options.prefix, options.uncounted);
    await new Promise<void>((resolve) => {
      const settled = () => {
        redis.off('ready', settled);
        redis.off('error', settled);
        resolve();
      };
      redis.on('ready', settled);
      redis.on('error', settled);
    });
    await storage.policyChecked;
    return storage;
  }

  async hit(key: string, windowMs: number, kind: LimitKind, limit?: number): Promise<WindowCount> {
    const counter = this.keyOf(key, kind);
    const outcome = uncountedOutcomeOf(kind);
    // An attempt refused as not counted must not count if Redis runs it late: it is marked.
    const attempt = outcome === 'refused' && limit !== undefined ? randomUUID() : undefined;
    let reply: [number, number];
    try {
      reply = (await (attempt
        ? this.redis.eval(
            MARKED_HIT_SCRIPT,
            2,
            counter,
            attemptsOf(counter),
            windowMs,
            attempt,
            limit!,
          )
        : this.redis.eval(HIT_SCRIPT, 1, counter, windowMs))) as [number, number];
    } catch (error) {
      this.unreachable(error as Error);
      this.uncounted?.(kind, outcome);
      if (attempt && !NOT_SENT.test((error as Error).message)) {
        this.giveUp({ counter, attempt, windowMs });
      }
      if (outcome === 'refused') throw new LimitsUnavailableError();
      return { count: 0, resetMs: windowMs };
    }
    if (this.lost) this.reachable();
    if (this.givenUp.size > 0) void this.giveUpWaiting();
    return { count: reply[0], resetMs: reply[1] };
  }

  /** Gives up in Redis the attempts given up so far, as far as it answers. */
  settled(): Promise<void> {
    return this.giveUpWaiting();
  }

  private giveUp(entry: GivenUp): void {
    this.givenUp.set(entry.attempt, entry);
    if (this.givenUp.size > GIVE_UPS_MAX) {
      this.givenUp.delete(this.givenUp.keys().next().value!);
    }
  }

  /** Gives up, one call each, the attempts waiting; those Redis does not take wait on. */
  private giveUpWaiting(): Promise<void> {
    this.givingUp ??= this.giveUpEach().finally(() => (this.givingUp = undefined));
    return this.givingUp;
  }

  private async giveUpEach(): Promise<void> {
    try {
      for (const [id, { counter, attempt, windowMs }] of this.givenUp) {
        await this.redis.eval(GIVE_UP_SCRIPT, 2, counter, attemptsOf(counter), windowMs, attempt);
        this.givenUp.delete(id);
      }
    } catch (error) {
      this.unreachable(error as Error);
    }
  }

  /** A hit that cannot be given back stays counted: the error is on the side of the limit. */
  async release(key: string, kind: LimitKind): Promise<void> {
    try {
      await this.redis.eval(RELEASE_SCRIPT, 1, this.keyOf(key, kind));
    } catch (error) {
      this.unreachable(error as Error);
    }
  }

  async peek(key: string, kind: LimitKind): Promise<WindowCount | null> {
    try {
      const stored = this.keyOf(key, kind);
      const [count, ttl] = await Promise.all([this.redis.get(stored), this.redis.pttl(stored)]);
      return count === null || ttl < 0 ? null : { count: Number(count), resetMs: ttl };
    } catch (error) {
      this.unreachable(error as Error);
      return null;
    }
  }

  /**
   * Reads `maxmemory-policy` and says in one line what it means for the counters: `unknown`
   * where the command is refused (managed services rename or forbid CONFIG), never an error.
   */
  async checkEvictionPolicy(): Promise<string> {
    let policy: unknown;
    let why = 'Redis did not say';
    try {
      policy = ((await this.redis.config('GET', 'maxmemory-policy')) as unknown[])[1];
    } catch (error) {
      why = `CONFIG GET was refused: ${(error as Error).message}`;
    }
    if (typeof policy !== 'string') {
      this.logger.warn(
        `Redis maxmemory-policy is unknown (${why}): rate limits need noeviction, or a full Redis may evict live counters and so start limits afresh; check the setting with your provider`,
      );
      return 'unknown';
    }
    if (policy === 'noeviction') {
      this.logger.log(
        'Redis maxmemory-policy is noeviction: rate-limit counters are never evicted',
      );
    } else {
      this.logger.warn(
        `Redis maxmemory-policy is ${policy}: a full Redis may evict live rate-limit counters (each has a TTL, so volatile-* policies evict them too) and so start limits afresh; set maxmemory-policy noeviction`,
      );
    }
    return policy;
  }

  private unreachable(error: Error): void {
    if (this.lost) return;
    this.lost = true;
    this.logger.warn(
      `Redis cannot count rate limits (${error.message}): sign-in, two-factor codes, sudo mode, passkeys and mail to others are refused with 503 until it answers; the API's limits let requests through uncounted`,
    );
  }

  private reachable(): void {
    if (!this.lost) return;
    this.lost = false;
    this.logger.log('Redis answers again: every limit counts again');
  }

  /** Both pools in one keyspace: a security key is marked, so no traffic key can name it. */
  private keyOf(key: string, kind: LimitKind): string {
    return `${this.prefix}${LIMIT_KINDS[kind].pool === 'security' ? 's:' : ''}${storedKey(key)}`;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.settled();
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
