import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { Transactions } from '../database/transactions.js';
import type { MailRequest } from './mail-message.js';
import { OutboxRepository } from './outbox.repository.js';
import { Clock } from '../clock/clock.js';

/**
 * Where features put the mail a change calls for: a row in `mail_outbox`, written with the
 * caller's manager so it commits, or rolls back, with the change itself. Once committed, the
 * sender of this process is woken (when it runs: the command line has none).
 */
@Injectable()
export class Outbox {
  private readonly listeners: (() => void)[] = [];

  constructor(
    private readonly messages: OutboxRepository,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
  ) {}

  async enqueue(manager: EntityManager, request: MailRequest): Promise<void> {
    await this.messages.insert(manager, {
      kind: request.kind,
      recipient: request.to,
      params: JSON.stringify(request.params ?? {}),
      nextAttemptAt: this.clock.now(),
    });
    this.transactions.afterCommit(manager, () => {
      for (const listener of this.listeners) listener();
    });
  }

  /** Called after each commit that enqueued mail. */
  onEnqueued(listener: () => void): void {
    this.listeners.push(listener);
  }
}
