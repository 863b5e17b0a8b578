import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { Events, OnEvent, type DomainEvents } from '../events/events.js';
import { WebhooksRepository } from './webhooks.repository.js';

/**
 * The audit streams' outbox: each entry written to the log is queued, in the same transaction,
 * for every active audit stream that gets it (its team's and the operator's), so that an entry
 * is in a stream exactly when it is in the log, whatever order transactions commit in.
 */
@Injectable()
export class AuditStreamOutbox {
  constructor(
    private readonly repository: WebhooksRepository,
    private readonly events: Events,
  ) {}

  @OnEvent('audit.written')
  async onWritten({ ids }: DomainEvents['audit.written'], manager?: EntityManager): Promise<void> {
    if (ids.length === 0) return;
    if ((await this.repository.queueStreamEntries(manager!, ids)) > 0) {
      await this.events.publish(manager!, 'webhooks.enqueued', {});
    }
  }
}
