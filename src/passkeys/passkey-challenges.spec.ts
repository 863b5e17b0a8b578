import { afterAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { EntityManager } from 'typeorm';
import { Clock, ManualClock } from '../clock/clock.js';
import { Transactions } from '../database/transactions.js';
import { Scheduler } from '../scheduler/scheduler.js';
import { CHALLENGE_PRUNE_MS, PasskeyChallenges } from './passkey-challenges.js';
import { PasskeysRepository } from './passkeys.repository.js';

const NOON = Date.parse('2026-11-23T12:00:00Z');

/** What mysql2 throws (wrapped by TypeORM) for a transaction InnoDB chose as a deadlock's victim. */
const deadlock = () =>
  Object.assign(new Error('Deadlock found when trying to get lock'), {
    driverError: { code: 'ER_LOCK_DEADLOCK' },
  });

describe('PasskeyChallenges', () => {
  let challenges: PasskeyChallenges;
  const every = jest.fn<Scheduler['every']>();
  const deleteExpired = jest.fn<PasskeysRepository['deleteExpiredChallenges']>();
  const debug = jest.spyOn(Logger.prototype, 'debug').mockImplementation(() => undefined);
  const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);

  beforeEach(async () => {
    every.mockReset();
    deleteExpired.mockReset();
    debug.mockClear();
    warn.mockClear();
    const statement = (work: (m: EntityManager) => Promise<unknown>) => work({} as never);
    const moduleRef = await Test.createTestingModule({
      providers: [
        PasskeyChallenges,
        { provide: Scheduler, useValue: { every } },
        { provide: PasskeysRepository, useValue: { deleteExpiredChallenges: deleteExpired } },
        { provide: Clock, useValue: new ManualClock(NOON) },
        { provide: Transactions, useValue: { run: statement, runStatement: statement } },
      ],
    }).compile();
    challenges = moduleRef.get(PasskeyChallenges);
  });
  afterAll(() => {
    debug.mockRestore();
    warn.mockRestore();
  });

  it('should have the scheduler prune expired challenges every few minutes when the module starts', async () => {
    challenges.onModuleInit();
    expect(every).toHaveBeenCalledWith(
      'expired passkey challenges',
      CHALLENGE_PRUNE_MS,
      expect.any(Function),
    );
    deleteExpired.mockResolvedValue(3);
    const job = every.mock.calls[0][2];
    await job(new AbortController().signal);
    expect(deleteExpired).toHaveBeenCalledWith(expect.anything(), new Date(NOON));
  });

  it('should count what a prune deleted when it succeeds', async () => {
    deleteExpired.mockResolvedValue(7);
    await expect(challenges.prune()).resolves.toBe(7);
  });

  it('should leave the rest for the next round, logged at debug only, when a prune deadlocks', async () => {
    deleteExpired.mockRejectedValue(deadlock());
    await expect(challenges.prune()).resolves.toBe(0);
    expect(debug).toHaveBeenCalledTimes(1);
    expect(warn).not.toHaveBeenCalled();
  });

  it('should warn when a prune fails otherwise', async () => {
    deleteExpired.mockRejectedValue(new Error('connection lost'));
    await expect(challenges.prune()).resolves.toBe(0);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('connection lost'));
  });
});
