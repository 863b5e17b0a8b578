import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Test } from '@nestjs/testing';
import type { EntityManager } from 'typeorm';
import { Clock, ManualClock, SystemClock } from '../clock/clock.js';
import { Transactions } from '../database/transactions.js';
import { Scheduler } from '../scheduler/scheduler.js';
import { AuditLog } from '../audit/audit-log.js';
import {
  LastUsedRecorder,
  MAX_ADDRESSES_PER_TOKEN,
  MAX_TRACKED_TOKENS,
  TokenUsageRecorder,
  USAGE_FLUSH_MS,
  type TokenUse,
} from './token-usage-recorder.js';
import { TokenUsageRepository } from './token-usage.repository.js';
import { TokensRepository } from './tokens.repository.js';

const NOON = Date.parse('2026-11-23T12:00:00Z');

describe('TokenUsageRecorder', () => {
  let recorder: TokenUsageRecorder;
  let scheduler: Scheduler;
  let clock: ManualClock;
  const repo = {
    addDailyRequests: jest.fn<TokenUsageRepository['addDailyRequests']>(),
    saveAddresses: jest.fn<TokenUsageRepository['saveAddresses']>(),
    trimAddresses: jest.fn<TokenUsageRepository['trimAddresses']>(),
    trimDays: jest.fn<TokenUsageRepository['trimDays']>(),
    addPreviousValueUses: jest.fn<TokenUsageRepository['addPreviousValueUses']>(),
  };
  const findAddressKeys = jest.fn<TokenUsageRepository['findAddressKeys']>();
  const addAddressIfNew = jest.fn<TokenUsageRepository['addAddressIfNew']>();
  const findTokenFacts = jest.fn<TokenUsageRepository['findTokenFacts']>();
  /** What the transaction under way will record once it commits (nothing if it throws). */
  let afterCommit: (() => void)[] = [];
  const audit = {
    record: jest.fn<AuditLog['record']>(),
    recordIn: jest.fn<AuditLog['recordIn']>(),
    flush: jest.fn<AuditLog['flush']>(),
  };
  const use = (overrides: Partial<TokenUse> = {}): TokenUse => ({
    tokenId: 1,
    userId: 7,
    at: NOON,
    ip: '203.0.113.7',
    userAgent: 'curl/8.5.0',
    ...overrides,
  });

  beforeEach(async () => {
    for (const fn of Object.values(repo)) fn.mockReset().mockResolvedValue(undefined);
    findAddressKeys.mockReset().mockResolvedValue(new Set());
    addAddressIfNew.mockReset().mockResolvedValue(true);
    findTokenFacts.mockReset().mockResolvedValue(new Map([[1, { name: 'deploy', teamId: null }]]));
    audit.record.mockReset();
    audit.recordIn
      .mockReset()
      .mockImplementation((_m, actor, entry) => afterCommit.push(() => audit.record(actor, entry)));
    audit.flush.mockReset().mockResolvedValue(undefined);
    clock = new ManualClock(NOON);
    scheduler = new Scheduler(clock);
    const moduleRef = await Test.createTestingModule({
      providers: [
        TokenUsageRecorder,
        { provide: Scheduler, useValue: scheduler },
        {
          provide: TokenUsageRepository,
          useValue: { ...repo, findAddressKeys, addAddressIfNew, findTokenFacts },
        },
        { provide: AuditLog, useValue: audit },
        { provide: Clock, useValue: clock },
        {
          provide: Transactions,
          useValue: {
            run: async (work: (m: EntityManager) => Promise<unknown>) => {
              afterCommit = [];
              const result = await work({} as never);
              for (const hook of afterCommit) hook();
              return result;
            },
          },
        },
      ],
    }).compile();
    recorder = moduleRef.get(TokenUsageRecorder);
  });
  afterEach(async () => {
    await recorder.onApplicationShutdown();
    await scheduler.onApplicationShutdown();
  });

  it('should write nothing while gathering, then every count in one batch when flushed', async () => {
    for (let i = 0; i < 100; i++) recorder.record(use({ at: NOON + i }));
    recorder.record(use({ tokenId: 2, ip: '2001:db8::1', at: NOON + 5 }));
    recorder.record(use({ at: NOON + 86_400_000 }));
    expect(repo.addDailyRequests).not.toHaveBeenCalled();

    await recorder.flush();
    expect(repo.addDailyRequests).toHaveBeenCalledTimes(1);
    expect(repo.addDailyRequests.mock.calls[0][1]).toEqual([
      { tokenId: 1, day: '2026-11-23', requests: 100 },
      { tokenId: 1, day: '2026-11-24', requests: 1 },
      { tokenId: 2, day: '2026-11-23', requests: 1 },
    ]);
    expect(repo.saveAddresses.mock.calls[0][1]).toEqual([
      {
        tokenId: 1,
        ip: '203.0.113.7',
        lastUsedAt: new Date(NOON + 86_400_000),
        userAgent: 'curl/8.5.0',
      },
      { tokenId: 2, ip: '2001:db8::1', lastUsedAt: new Date(NOON + 5), userAgent: 'curl/8.5.0' },
    ]);
    expect(repo.trimAddresses).toHaveBeenCalledWith(
      expect.anything(),
      [1, 2],
      MAX_ADDRESSES_PER_TOKEN,
    );

    await recorder.flush();
    expect(repo.addDailyRequests).toHaveBeenCalledTimes(1);
  });

  it('should keep only the most recent addresses of a token whatever clients send', async () => {
    for (let i = 0; i < 1000; i++) {
      recorder.record(use({ ip: `10.0.${i >> 8}.${i & 255}`, at: NOON + i }));
    }
    recorder.record(use({ ip: 'not an address', at: NOON + 2000 }));
    recorder.record(use({ ip: '::ffff:192.0.2.1', at: NOON + 2001, userAgent: 'x'.repeat(5000) }));
    await recorder.flush();
    const saved = repo.saveAddresses.mock.calls[0][1];
    expect(saved.map((a) => a.ip)).toEqual([
      '10.0.3.228',
      '10.0.3.229',
      '10.0.3.230',
      '10.0.3.231',
      '192.0.2.1',
    ]);
    expect(saved.at(-1)!.userAgent).toHaveLength(255);
    expect(repo.addDailyRequests.mock.calls[0][1]).toEqual([
      { tokenId: 1, day: '2026-11-23', requests: 1002 },
    ]);
  });

  it('should count at most MAX_TRACKED_TOKENS tokens between two flushes', async () => {
    for (let id = 1; id <= MAX_TRACKED_TOKENS + 50; id++) recorder.record(use({ tokenId: id }));
    await recorder.flush();
    expect(repo.addDailyRequests.mock.calls[0][1]).toHaveLength(MAX_TRACKED_TOKENS);
    recorder.record(use({ tokenId: MAX_TRACKED_TOKENS + 1 }));
    await recorder.flush();
    expect(repo.addDailyRequests.mock.calls[1][1]).toEqual([
      { tokenId: MAX_TRACKED_TOKENS + 1, day: '2026-11-23', requests: 1 },
    ]);
  });

  it("should count uses of a regenerated token's previous value for its grace period", async () => {
    const validUntil = new Date(NOON + 600_000);
    recorder.record(use());
    recorder.record(use({ previousValidUntil: validUntil, at: NOON + 10 }));
    recorder.record(use({ previousValidUntil: validUntil, at: NOON + 20 }));
    await recorder.flush();
    expect(repo.addPreviousValueUses).toHaveBeenCalledWith(expect.anything(), {
      tokenId: 1,
      validUntil,
      requests: 2,
      lastUsedAt: new Date(NOON + 20),
    });
  });

  it('should gather a batch again when it could not be written, and write it next time', async () => {
    repo.addDailyRequests.mockRejectedValueOnce(new Error('connection lost'));
    recorder.record(use());
    await recorder.flush();
    recorder.record(use());
    await recorder.flush();
    expect(repo.addDailyRequests).toHaveBeenCalledTimes(2);
    expect(repo.addDailyRequests.mock.calls[1][1]).toEqual([
      { tokenId: 1, day: '2026-11-23', requests: 2 },
    ]);
  });

  it('should have the scheduler flush it once a minute from its first use on', async () => {
    const every = jest.spyOn(scheduler, 'every');
    expect(every).not.toHaveBeenCalled();
    recorder.record(use());
    recorder.record(use({ tokenId: 2 }));
    expect(every).toHaveBeenCalledWith('token usage', USAGE_FLUSH_MS, expect.any(Function));

    clock.advance(USAGE_FLUSH_MS - 1);
    await scheduler.drain();
    expect(repo.addDailyRequests).not.toHaveBeenCalled();
    clock.advance(1);
    await scheduler.drain();
    expect(repo.addDailyRequests).toHaveBeenCalledTimes(1);
  });

  it('should write what is left when the application shuts down', async () => {
    recorder.record(use());
    await recorder.onApplicationShutdown();
    expect(repo.addDailyRequests).toHaveBeenCalledTimes(1);
  });

  it("should log a token's first use from an address it has not been used from, once its usage is written, dated when that use happened", async () => {
    findAddressKeys.mockResolvedValue(new Set(['1 203.0.113.7']));
    recorder.record(use());
    recorder.record(use({ ip: '198.51.100.4', at: NOON + 1 }));
    recorder.record(use({ ip: '198.51.100.4', at: NOON + 30_000 }));
    await recorder.flush();
    expect(audit.record).toHaveBeenCalledTimes(1);
    expect(audit.record).toHaveBeenCalledWith(
      {
        kind: 'token',
        userId: 7,
        tokenId: 1,
        client: { ip: '198.51.100.4', userAgent: 'curl/8.5.0' },
      },
      // The first use from it, not the latest nor the flush's own time.
      expect.objectContaining({
        event: 'token.new_ip',
        at: new Date(NOON + 1),
        teamId: null,
        detail: { name: 'deploy', ip: '198.51.100.4' },
      }),
    );
    // In the transaction that writes the usage, for the webhook outbox to join.
    expect(audit.recordIn).toHaveBeenCalledTimes(1);
  });

  it('should leave a new address to the flush that added it, when another instance added it first', async () => {
    addAddressIfNew.mockResolvedValue(false);
    recorder.record(use({ ip: '198.51.100.4', at: NOON + 1 }));
    await recorder.flush();
    expect(addAddressIfNew).toHaveBeenCalledTimes(1);
    expect(repo.saveAddresses).toHaveBeenCalledTimes(1);
    expect(audit.recordIn).not.toHaveBeenCalled();
  });

  it('should date a first use from an address by when it happened even when its first write failed', async () => {
    repo.addDailyRequests.mockRejectedValueOnce(new Error('connection lost'));
    recorder.record(use({ ip: '198.51.100.9', at: NOON + 5 }));
    await recorder.flush();
    recorder.record(use({ ip: '198.51.100.9', at: NOON + 90_000 }));
    await recorder.flush();
    expect(audit.record).toHaveBeenCalledTimes(1);
    expect(audit.record.mock.calls[0][1]).toMatchObject({
      event: 'token.new_ip',
      at: new Date(NOON + 5),
    });
  });

  it('should log no new address when the usage could not be written', async () => {
    repo.saveAddresses.mockRejectedValueOnce(new Error('database gone'));
    recorder.record(use());
    await recorder.flush();
    expect(audit.record).not.toHaveBeenCalled();
  });

  it('should keep one refusal per token a minute for the log, handed over at the next flush', async () => {
    const refusal = {
      tokenId: 3,
      userId: 7,
      reason: 'token_revoked',
      ip: '203.0.113.9',
      userAgent: 'curl/8',
    };
    recorder.recordRefusal({ ...refusal, at: NOON });
    recorder.recordRefusal({ ...refusal, at: NOON + 59_999 });
    recorder.recordRefusal({ ...refusal, tokenId: 4, at: NOON + 10 });
    expect(audit.record).not.toHaveBeenCalled();
    await recorder.flush();
    expect(audit.record.mock.calls.map(([a, e]) => [e.event, 'tokenId' in a && a.tokenId])).toEqual(
      [
        ['token.refused', 3],
        ['token.refused', 4],
      ],
    );
    recorder.recordRefusal({ ...refusal, at: NOON + 60_000 });
    await recorder.flush();
    expect(audit.record).toHaveBeenCalledTimes(3);
  });

  it('should keep refusals of at most MAX_TRACKED_TOKENS tokens a minute, whatever clients send', async () => {
    for (let id = 1; id <= MAX_TRACKED_TOKENS + 50; id++) {
      recorder.recordRefusal({
        tokenId: id,
        userId: 1,
        reason: 'token_expired',
        at: NOON,
        ip: undefined,
        userAgent: undefined,
      });
    }
    await recorder.flush();
    expect(audit.record).toHaveBeenCalledTimes(MAX_TRACKED_TOKENS);
  });
});

describe('LastUsedRecorder', () => {
  let recorder: LastUsedRecorder;
  let scheduler: Scheduler;
  const flush = () => scheduler.drain();
  const touchLastUsed = jest.fn<TokensRepository['touchLastUsed']>();

  beforeEach(async () => {
    touchLastUsed.mockReset().mockResolvedValue(undefined);
    scheduler = new Scheduler(new SystemClock());
    const moduleRef = await Test.createTestingModule({
      providers: [
        LastUsedRecorder,
        { provide: Scheduler, useValue: scheduler },
        { provide: TokensRepository, useValue: { touchLastUsed } },
        {
          provide: Transactions,
          useValue: {
            runStatement: (work: (m: EntityManager) => Promise<unknown>) =>
              work({} as EntityManager),
          },
        },
      ],
    }).compile();
    recorder = moduleRef.get(LastUsedRecorder);
  });
  afterEach(() => scheduler.onApplicationShutdown());

  it('should write once for a burst of uses within a minute', async () => {
    const now = 1_000_000;
    for (let i = 0; i < 50; i++) recorder.record(1, null, now + i * 100);
    await flush();
    expect(touchLastUsed).toHaveBeenCalledTimes(1);
    expect(touchLastUsed).toHaveBeenCalledWith(
      expect.anything(),
      [{ tokenId: 1, at: new Date(now) }],
      60_000,
    );
  });

  it('should write the uses of many tokens together, 500 a statement', async () => {
    for (let id = 1; id <= 1_200; id++) recorder.record(id, null, 1_000_000 + id);
    await flush();
    const batches = touchLastUsed.mock.calls.map(([, uses]) => uses);
    expect(batches.map((uses) => uses.length)).toEqual([500, 500, 200]);
    expect(batches.flat().map((u) => u.tokenId)).toEqual(
      Array.from({ length: 1_200 }, (_, i) => i + 1),
    );
    expect(batches[2][199]).toEqual({ tokenId: 1_200, at: new Date(1_001_200) });
  });

  it('should not write when the stored time is under a minute old', async () => {
    recorder.record(1, new Date(1_000_000 - 59_000), 1_000_000);
    await flush();
    expect(touchLastUsed).not.toHaveBeenCalled();
  });

  it('should write again a minute after the last write', async () => {
    recorder.record(1, null, 1_000_000);
    await flush();
    recorder.record(1, null, 1_060_000);
    await flush();
    expect(touchLastUsed).toHaveBeenCalledTimes(2);
    expect(touchLastUsed.mock.calls[1][1]).toEqual([{ tokenId: 1, at: new Date(1_060_000) }]);
  });

  it('should not write before the caller has moved on', () => {
    recorder.record(1, null, 1_000_000);
    expect(touchLastUsed).not.toHaveBeenCalled();
  });

  it('should swallow a failed write and try again on the next use', async () => {
    touchLastUsed.mockRejectedValueOnce(new Error('connection lost'));
    recorder.record(1, null, 1_000_000);
    recorder.record(2, null, 1_000_000);
    await flush();
    recorder.record(1, null, 1_000_500);
    await flush();
    expect(touchLastUsed).toHaveBeenCalledTimes(2);
    expect(touchLastUsed.mock.calls[1][1]).toEqual([{ tokenId: 1, at: new Date(1_000_500) }]);
  });

  it('should write what has gathered when the application stops', async () => {
    recorder.record(1, null, 1_000_000);
    await recorder.onApplicationShutdown();
    expect(touchLastUsed).toHaveBeenCalledTimes(1);
    await flush();
    expect(touchLastUsed).toHaveBeenCalledTimes(1);
  });
});
