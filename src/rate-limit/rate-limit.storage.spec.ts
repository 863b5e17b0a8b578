import { beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { ManualClock } from '../clock/clock.js';
import type { LimitKind, UncountedOutcome } from './limit-kinds.js';
import { MemoryRateLimitStorage } from './rate-limit.storage.js';
import { reserveAttempt } from './reserved-attempt.js';
import { RateLimitedError } from './rate-limit.errors.js';

const MINUTE = 60_000;

// The warning a full security pool logs is asserted by the e2e tests, not printed here.
beforeAll(() => Logger.overrideLogger(false));

describe('MemoryRateLimitStorage', () => {
  let storage: MemoryRateLimitStorage;
  let clock: ManualClock;

  beforeEach(() => {
    clock = new ManualClock(Date.UTC(2026, 10, 24, 12));
    storage = new MemoryRateLimitStorage(100, clock);
  });

  it('should give each hit its own count, and take one back on release', () => {
    expect([1, 2, 3].map(() => storage.hit('k', MINUTE, 'api-token').count)).toEqual([1, 2, 3]);
    storage.release('k', 'api-token');
    expect(storage.hit('k', MINUTE, 'api-token').count).toBe(3);
  });

  it('should drop a security window whose count falls back to zero', () => {
    storage.hit('k', MINUTE, 'sign-in');
    storage.release('k', 'sign-in');
    expect(storage.peek('k', 'sign-in')).toBeNull();
    expect(storage.size).toBe(0);
  });

  it('should keep a traffic window given back to zero until it ends, counting from zero', () => {
    storage.hit('k', MINUTE, 'api-token');
    clock.advance(10_000);
    storage.release('k', 'api-token');
    storage.release('k', 'api-token');
    expect(storage.peek('k', 'api-token')).toEqual({ count: 0, resetMs: 50_000 });
    expect(storage.hit('k', MINUTE, 'api-token')).toEqual({ count: 1, resetMs: 50_000 });
    clock.advance(50_000);
    expect(storage.hit('k', MINUTE, 'api-token')).toEqual({ count: 1, resetMs: MINUTE });
  });

  it('should start again when the window ends, and give nothing back to an ended one', () => {
    storage.hit('k', MINUTE, 'api-token');
    storage.hit('k', MINUTE, 'api-token');
    clock.advance(MINUTE);
    storage.release('k', 'api-token');
    expect(storage.hit('k', MINUTE, 'api-token')).toEqual({ count: 1, resetMs: MINUTE });
  });

  it('should evict the oldest traffic window when a new key comes past the bound', () => {
    for (let i = 0; i < 150; i++) storage.hit(`flood:${i}`, MINUTE, 'api-token');
    expect(storage.sizeOf('traffic')).toBe(100);
    expect(storage.peek('flood:0', 'api-token')).toBeNull();
    expect(storage.peek('flood:149', 'api-token')?.count).toBe(1);
  });

  it('should keep every live security window whatever other traffic brings', () => {
    for (let i = 0; i < 4; i++) storage.hit('2fa-account:7', 15 * MINUTE, 'two-factor');
    for (let i = 0; i < 1_000; i++) storage.hit(`flood:${i}`, MINUTE, 'api-token');
    expect(storage.peek('2fa-account:7', 'two-factor')?.count).toBe(4);
    // Keys of either pool are apart: a traffic key never reads or writes a security window.
    expect(storage.peek('2fa-account:7', 'api-token')).toBeNull();
  });

  it('should tell of each hit a full security pool refuses, by kind', () => {
    const uncounted: [LimitKind, UncountedOutcome][] = [];
    storage = new MemoryRateLimitStorage(100, clock, (kind, outcome) =>
      uncounted.push([kind, outcome]),
    );
    for (let i = 0; i < 100; i++) storage.hit(`sign-in-ip:${i}`, MINUTE, 'sign-in');
    for (let i = 0; i < 150; i++) storage.hit(`flood:${i}`, MINUTE, 'api-token');
    storage.hit('2fa-account:1', MINUTE, 'two-factor');
    expect(uncounted).toEqual([['two-factor', 'refused']]);
  });

  it('should refuse a new security window rather than evict a live one, until windows end', () => {
    for (let i = 0; i < 100; i++) storage.hit(`sign-in-ip:${i}`, MINUTE, 'sign-in');
    clock.advance(10_000);
    const refused = storage.hit('sign-in-ip:new', MINUTE, 'sign-in');
    expect(refused.count).toBeGreaterThan(1_000_000);
    expect(refused.resetMs).toBe(50_000);
    expect(storage.peek('sign-in-ip:0', 'sign-in')?.count).toBe(1);
    expect(storage.sizeOf('security')).toBe(100);
    // An existing window still counts.
    expect(storage.hit('sign-in-ip:5', MINUTE, 'sign-in').count).toBe(2);

    clock.advance(50_000);
    expect(storage.hit('sign-in-ip:new', MINUTE, 'sign-in').count).toBe(1);
    expect(storage.sizeOf('security')).toBe(1);
  });
});

describe('reserveAttempt', () => {
  let storage: MemoryRateLimitStorage;

  beforeEach(() => {
    storage = new MemoryRateLimitStorage(100);
  });

  const reserve = () =>
    reserveAttempt(storage, 'sign-in', [{ key: 'a', windowMs: MINUTE, limit: 3 }], ([w]) =>
      w.count > 3 ? w : undefined,
    );

  it('should let exactly the limit through when attempts arrive together', async () => {
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, reserve));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(3);
    const refused = outcomes.filter((o) => o.status === 'rejected');
    expect(refused).toHaveLength(17);
    expect((refused[0] as PromiseRejectedResult).reason).toBeInstanceOf(RateLimitedError);
    // Refusals were given back: only the three reserved attempts count.
    expect(storage.peek('a', 'sign-in')?.count).toBe(3);
  });

  it('should make room for another attempt when one is given back', async () => {
    const attempts = await Promise.all([reserve(), reserve(), reserve()]);
    await expect(reserve()).rejects.toBeInstanceOf(RateLimitedError);
    await attempts[0].giveBack();
    await attempts[0].giveBack();
    await expect(reserve()).resolves.toBeDefined();
    await expect(reserve()).rejects.toBeInstanceOf(RateLimitedError);
  });
});
