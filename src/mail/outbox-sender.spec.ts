import { afterEach, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { EntityManager } from 'typeorm';
import { Clock, ManualClock } from '../clock/clock.js';
import { CONFIG } from '../config/config.module.js';
import { Transactions } from '../database/transactions.js';
import { Scheduler, SCHEDULER_ROUND_LIMIT } from '../scheduler/scheduler.js';
import { MailTransport } from './mail-transport.js';
import type { MailComposer } from './mail-message.js';
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
    renewIfPending: jest.fn<OutboxRepository['renewIfPending']>(async () => true),
    finish: jest.fn<OutboxRepository['finish']>(async () => true),
  };
  const compose = jest.fn<MailComposer>(async () => ({
    to: 'ada@example.com',
    subject: 'Hi',
    text: '',
    html: '',
  }));
  const transport = { send: jest.fn(async () => undefined), close: jest.fn() };

  beforeEach(async () => {
    messages.claimDue.mockReset();
    for (const mock of [messages.renewIfPending, messages.finish, compose, transport.send]) {
      mock.mockClear();
    }
    const module = await Test.createTestingModule({
      providers: [
        OutboxSender,
        Scheduler,
        { provide: SCHEDULER_ROUND_LIMIT, useValue: 50 },
        { provide: OutboxRepository, useValue: messages },
        { provide: Mailer, useValue: { composerOf: () => compose } },
        { provide: MailTransport, useValue: transport },
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

  it('should make and send nothing of a message withdrawn after it was claimed, and finish it dropped', async () => {
    const message = { id: 5, kind: 'password-reset', recipient: 'ada@example.com', params: '{}' };
    messages.claimDue.mockResolvedValueOnce([message as OutboxMessage]).mockResolvedValue([]);
    messages.renewIfPending.mockResolvedValueOnce(false);
    sender.wake();
    await waitUntil(() => messages.finish.mock.calls.length === 1);
    expect(messages.renewIfPending).toHaveBeenCalledWith(
      manager,
      message,
      expect.any(String),
      expect.any(Date),
    );
    expect(compose).not.toHaveBeenCalled();
    expect(transport.send).not.toHaveBeenCalled();
    expect(messages.finish).toHaveBeenCalledWith(
      manager,
      message,
      expect.any(String),
      expect.objectContaining({ status: 'dropped' }),
    );
  });

  it('should make and send a message still pending when it is made', async () => {
    const message = { id: 6, kind: 'password-reset', recipient: 'ada@example.com', params: '{}' };
    messages.claimDue.mockResolvedValueOnce([message as OutboxMessage]).mockResolvedValue([]);
    sender.wake();
    await waitUntil(() => messages.finish.mock.calls.length === 1);
    expect(compose).toHaveBeenCalledWith(manager, { to: 'ada@example.com', params: {} });
    expect(transport.send).toHaveBeenCalledTimes(1);
    expect(messages.finish).toHaveBeenCalledWith(
      manager,
      message,
      expect.any(String),
      expect.objectContaining({ status: 'sent' }),
    );
  });
});

/** Waits on a state change in the background work, without a fixed pause. */
async function waitUntil(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setImmediate(resolve));
}
