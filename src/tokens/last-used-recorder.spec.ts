import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Test } from '@nestjs/testing';
import type { EntityManager } from 'typeorm';
import { Transactions } from '../database/transactions.js';
import { Scheduler } from '../scheduler/scheduler.js';
import { LastUsedRecorder } from './last-used-recorder.js';
import { TokensRepository } from './tokens.repository.js';

describe('LastUsedRecorder', () => {
  let recorder: LastUsedRecorder;
  let scheduler: Scheduler;
  const flush = () => scheduler.drain();
  const touchLastUsed = jest.fn<TokensRepository['touchLastUsed']>();

  beforeEach(async () => {
    touchLastUsed.mockReset().mockResolvedValue(undefined);
    scheduler = new Scheduler();
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
      1,
      new Date(now),
      new Date(now - 60_000),
    );
  });

  it('should not write when the stored time is under a minute old', async () => {
    recorder.record(1, new Date(1_000_000 - 59_000), 1_000_000);
    await flush();
    expect(touchLastUsed).not.toHaveBeenCalled();
  });

  it('should write again a minute after the last write', async () => {
    recorder.record(1, null, 1_000_000);
    recorder.record(1, null, 1_060_000);
    await flush();
    expect(touchLastUsed).toHaveBeenCalledTimes(2);
  });

  it('should not write before the caller has moved on', () => {
    recorder.record(1, null, 1_000_000);
    expect(touchLastUsed).not.toHaveBeenCalled();
  });

  it('should swallow a failed write and try again on the next use', async () => {
    touchLastUsed.mockRejectedValueOnce(new Error('connection lost'));
    recorder.record(1, null, 1_000_000);
    await flush();
    await flush();
    recorder.record(1, null, 1_000_500);
    await flush();
    expect(touchLastUsed).toHaveBeenCalledTimes(2);
  });
});
