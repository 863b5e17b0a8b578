import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Logger, type LoggerService } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { TcpProxy } from '../../test/support/tcp-proxy.js';
import { waitFor } from '../../test/support/wait-for.js';
import type { LimitKind, UncountedOutcome } from './limit-kinds.js';
import { LimitsUnavailableError } from './rate-limit.errors.js';
import type { RateLimitStorage } from './rate-limit.storage.js';
import { RedisRateLimitStorage } from './redis-rate-limit.storage.js';
import { testRedisUrl } from '../../test/support/redis.js';

const MINUTE = 60_000;

// What the storage logs is asserted below where it matters, not printed.
beforeAll(() => Logger.overrideLogger(false));

/** Redis for the specs: TEST_REDIS_URL's host and port, or the local server. */
const REDIS = new URL(testRedisUrl());

describe('RedisRateLimitStorage, with Redis behind a proxy that fails', () => {
  let proxy: TcpProxy;
  let storage: RedisRateLimitStorage;
  let uncounted: [LimitKind, UncountedOutcome][];
  /** Each test's own keys, and a client that reads them past the proxy. */
  let prefix: string;
  let direct: Redis;

  const connect = (timeoutMs = 1_000) =>
    RedisRateLimitStorage.connect({
      url: `redis://127.0.0.1:${proxy.port}`,
      prefix,
      timeoutMs,
      uncounted: (kind, outcome) => uncounted.push([kind, outcome]),
    });

  /** Hits a key of its own until Redis counts it: the storage is back. */
  const counting = (s: RateLimitStorage) =>
    waitFor(async () => {
      try {
        return (await s.hit(`probe:${randomBytes(4).toString('hex')}`, MINUTE, 'sign-in')).count;
      } catch (error) {
        if (error instanceof LimitsUnavailableError) return 0;
        throw error;
      }
    });

  beforeAll(async () => {
    const { Redis: Client } = await import('ioredis');
    direct = new Client(REDIS.href);
  });
  afterAll(() => direct.quit());
  beforeEach(async () => {
    uncounted = [];
    prefix = `tessera-test:${randomBytes(6).toString('hex')}:`;
    proxy = await new TcpProxy(REDIS.hostname, Number(REDIS.port || 6379)).start();
  });
  afterEach(async () => {
    await storage?.onApplicationShutdown();
    await proxy.stop();
  });

  it('should count each kind of hit apart, and give one back, when Redis answers', async () => {
    storage = await connect();
    expect((await storage.hit('k', MINUTE, 'sign-in')).count).toBe(1);
    expect((await storage.hit('k', MINUTE, 'sign-in')).count).toBe(2);
    // A traffic key never names a security counter.
    expect((await storage.hit('k', MINUTE, 'api-client')).count).toBe(1);
    await storage.release('k', 'sign-in');
    expect(await storage.peek('k', 'sign-in')).toMatchObject({ count: 1 });
    expect(uncounted).toEqual([]);
  });

  it('should refuse a limit that fails closed and let one that fails open through uncounted while connections are reset', async () => {
    storage = await connect();
    await storage.hit('2fa:1', MINUTE, 'two-factor');
    proxy.fail('reset');
    await expect(storage.hit('2fa:1', MINUTE, 'two-factor')).rejects.toBeInstanceOf(
      LimitsUnavailableError,
    );
    await expect(storage.hit('mail:1', MINUTE, 'account-mail')).rejects.toBeInstanceOf(
      LimitsUnavailableError,
    );
    expect(await storage.hit('api:1', MINUTE, 'api-token')).toEqual({ count: 0, resetMs: MINUTE });
    expect(uncounted).toEqual([
      ['two-factor', 'refused'],
      ['account-mail', 'refused'],
      ['api-token', 'allowed'],
    ]);
    // Given back while Redis is away: the hit stays counted, on the side of the limit.
    await storage.release('2fa:1', 'two-factor');

    proxy.heal();
    await counting(storage);
    expect((await storage.hit('2fa:1', MINUTE, 'two-factor')).count).toBe(2);
  });

  it('should answer every hit sent into a black-holed Redis, never count one late, and count again once it is back', async () => {
    storage = await connect();
    proxy.fail('black-hole');
    const hits = await Promise.allSettled(
      Array.from({ length: 20 }, () => storage.hit('sign-in-ip:1', MINUTE, 'sign-in')),
    );
    expect(
      hits.map((h) => h.status === 'rejected' && h.reason instanceof LimitsUnavailableError),
    ).toEqual(Array(20).fill(true));
    expect(await storage.hit('api:1', MINUTE, 'api-client')).toEqual({ count: 0, resetMs: MINUTE });

    proxy.heal();
    await counting(storage);
    // The twenty were answered as not counted: none was sent again on the new connection.
    expect((await storage.hit('sign-in-ip:1', MINUTE, 'sign-in')).count).toBe(1);
  });

  describe('hits Redis runs after their call timed out (answered 503, not counted)', () => {
    const LIMIT = 10;
    const timedOut = async (key: string, n: number, newConnections = false) => {
      proxy.hold({ newConnections });
      const hits = await Promise.allSettled(
        Array.from({ length: n }, () => storage.hit(key, MINUTE, 'sign-in', LIMIT)),
      );
      expect(
        hits.map((h) => h.status === 'rejected' && h.reason instanceof LimitsUnavailableError),
      ).toEqual(Array(n).fill(true));
    };
    /** The counter as Redis holds it, read past the proxy. */
    const stored = async (key: string) => Number((await direct.get(`${prefix}s:${key}`)) ?? 0);

    beforeEach(async () => {
      storage = await connect(300);
    });

    it('should mark no more attempts than the limit, however many are refused past it', async () => {
      for (let i = 0; i < 50; i++) await storage.hit('flood', MINUTE, 'sign-in', 3);
      expect(await stored('flood')).toBe(50);
      expect(await direct.hlen(`${prefix}s:flood:attempts`)).toBe(3);
    });

    it('should give back those Redis ran late, once it answers again', async () => {
      expect((await storage.hit('late', MINUTE, 'sign-in', LIMIT)).count).toBe(1);
      // The connections made meanwhile are held too: Redis runs the late hits (and counts
      // them) before anything the storage sends afterwards.
      await timedOut('late', 3, true);
      await proxy.deliverHeld();
      await counting(storage);
      await storage.settled();
      expect(await stored('late')).toBe(1);
      expect((await storage.hit('late', MINUTE, 'sign-in', LIMIT)).count).toBe(2);
    });

    it('should not count those that reach Redis after they were given up', async () => {
      expect((await storage.hit('later', MINUTE, 'sign-in', LIMIT)).count).toBe(1);
      await timedOut('later', 3);
      // A new connection gives them up first; then Redis runs them.
      await counting(storage);
      await storage.settled();
      await proxy.deliverHeld();
      expect(await stored('later')).toBe(1);
      expect((await storage.hit('later', MINUTE, 'sign-in', LIMIT)).count).toBe(2);
    });
  });

  it('should start when Redis cannot be reached, refuse until it can, then count, with nothing to give up', async () => {
    proxy.fail('reset');
    storage = await connect();
    for (let i = 0; i < 20; i++) {
      await expect(storage.hit('k', MINUTE, 'sudo', 5)).rejects.toBeInstanceOf(
        LimitsUnavailableError,
      );
    }
    proxy.heal();
    await counting(storage);
    await storage.settled();
    // Refused before they were sent: Redis holds nothing of them.
    expect(await storage.peek('k', 'sudo')).toBeNull();
    expect((await storage.hit('k', MINUTE, 'sudo', 5)).count).toBe(1);
    expect(Object.keys(await direct.hgetall(`${prefix}s:k:attempts`))).toHaveLength(1);
  });
});

describe('RedisRateLimitStorage.checkEvictionPolicy', () => {
  const lines: string[] = [];
  const capture: LoggerService = {
    log: (message: string) => lines.push(`log ${message}`),
    warn: (message: string) => lines.push(`warn ${message}`),
    error: (message: string) => lines.push(`error ${message}`),
  };

  beforeEach(() => {
    lines.length = 0;
    Logger.overrideLogger(capture);
  });
  afterEach(() => Logger.overrideLogger(false));

  /** A Redis that answers CONFIG GET with `answer` (one class under test; the rest is not used). */
  const redisAnswering = (answer: () => Promise<unknown>) =>
    ({ on: () => undefined, config: answer }) as unknown as Redis;

  it('should say so in one line, not a warning, when the policy is noeviction', async () => {
    const storage = new RedisRateLimitStorage(
      redisAnswering(async () => ['maxmemory-policy', 'noeviction']),
    );
    await expect(storage.checkEvictionPolicy()).resolves.toBe('noeviction');
    expect(lines).toEqual([
      'log Redis maxmemory-policy is noeviction: rate-limit counters are never evicted',
    ]);
  });

  it('should warn in one line when Redis may evict counters, volatile policies included', async () => {
    for (const policy of ['allkeys-lru', 'volatile-ttl']) {
      lines.length = 0;
      const storage = new RedisRateLimitStorage(
        redisAnswering(async () => ['maxmemory-policy', policy]),
      );
      await expect(storage.checkEvictionPolicy()).resolves.toBe(policy);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(`^warn Redis maxmemory-policy is ${policy}: .*set maxmemory-policy noeviction$`),
      );
    }
  });

  it('should call the policy unknown, without failing, when CONFIG is refused or says nothing', async () => {
    const refused = new RedisRateLimitStorage(
      redisAnswering(async () => {
        throw new Error("ERR unknown command 'CONFIG', with args beginning with: 'GET'");
      }),
    );
    await expect(refused.checkEvictionPolicy()).resolves.toBe('unknown');
    const silent = new RedisRateLimitStorage(redisAnswering(async () => []));
    await expect(silent.checkEvictionPolicy()).resolves.toBe('unknown');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^warn Redis maxmemory-policy is unknown \(CONFIG GET was refused: ERR unknown command 'CONFIG'.*\): rate limits need noeviction/,
    );
    expect(lines[1]).toMatch(/^warn Redis maxmemory-policy is unknown \(Redis did not say\)/);
  });
});
