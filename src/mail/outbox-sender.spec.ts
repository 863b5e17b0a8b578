import { afterEach, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { EntityManager } from 'typeorm';
import { Clock, ManualClock } from '../clock/clock.js';
import { CONFIG } from '../config/config.module.js';
import { Transactions } from '../database/transactions.js';
import { Scheduler, SCHEDULER_ROUND_LIMIT } from '../scheduler/scheduler.js';
import { MailTransport } from './mail-transport.js';
import { Mailer } from './mailer.js';
import type { OutboxMessage } from './outbox-message.entity.js';
import { OutboxRepository } from './outbox.repository.js';
import { OutboxSender } from './outbox-sender.js';

// The abandoned round and the failed look at the outbox are logged; not printed here.
beforeAll(() => Logger.overrideLogger(false));

describe('OutboxSender', () => {
  let sender: OutboxSender;
  let scheduler: Scheduler;
  const manager = {} as EntityManager;
  const messages = {
    claimDue: jest.fn<(m: EntityManager) => Promise<OutboxMessage[]>>(),
    nextChance: jest.fn(async () => null),
    pruneFinished: jest.fn(async () => 0),
    release: jest.fn(async () => undefined),
  };

  beforeEach(async () => {
    messages.claimDue.mockReset();
    const module = await Test.createTestingModule({
      providers: [
        OutboxSender,
        Scheduler,
        { provide: SCHEDULER_ROUND_LIMIT, useValue: 50 },
        { provide: OutboxRepository, useValue: messages },
        { provide: Mailer, useValue: { composerOf: () => undefined } },
        { provide: MailTransport, useValue: { send: jest.fn(), close: jest.fn() } },
        {
          provide: Transactions,
          useValue: { run: (work: (m: EntityManager) => unknown) => work(manager) },
        },
        { provide: Clock, useValue: new ManualClock() },
        {
          provide: CONFIG,
          useValue: { mail: { retrySeconds: 3600, pollSeconds: 3600, maxAttempts: 8 } },
        },
      ],
    }).compile();
    sender = module.get(OutboxSender);
    scheduler = module.get(Scheduler);
  });

  afterEach(async () => {
    await sender.onModuleDestroy();
    await scheduler.onApplicationShutdown();
  });

  it('should look at the outbox again on the next wake-up when a round that never ended was abandoned', async () => {
    // The first look at the outbox never answers (a stalled database); later ones find nothing.
    messages.claimDue.mockImplementationOnce(() => new Promise<never>(() => undefined));
    messages.claimDue.mockResolvedValue([]);
    sender.wake();
    await waitUntil(() => messages.claimDue.mock.calls.length === 1);
    // Woken while the stuck round is under way: the next round comes once it is abandoned.
    sender.wake();
    await scheduler.drain();
    expect(messages.claimDue).toHaveBeenCalledTimes(2);
  });
});

/** Waits on a state change in the background work, without a fixed pause. */
async function waitUntil(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setImmediate(resolve));
}
