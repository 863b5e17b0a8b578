import { Injectable } from '@nestjs/common';
import type { AuditEvent } from '../audit/audit-event.entity.js';
import { Clock } from '../clock/clock.js';
import { Transactions } from '../database/transactions.js';
import { toExportLine } from '../security-log/audit.view.js';
import { newMessageId } from './webhook-outbox.js';
import { WebhooksRepository } from './webhooks.repository.js';

/** Entries of the log in one delivery of an audit stream, at most. */
export const STREAM_BATCH = 100;

/** The event type an audit stream's deliveries are logged under. */
export const STREAM_EVENT_TYPE = 'audit.entries';

/** A batch's body: each entry as `audit:export` writes it, one JSON object a line. */
export function streamBody(events: AuditEvent[]): string {
  return events.map((e) => `${JSON.stringify(toExportLine(e))}\n`).join('');
}

/**
 * Makes the next delivery of each audit stream that is ready for one: its oldest waiting
 * entries, once its previous delivery was delivered (never while one is pending, nor while one
 * is dead: the stream is stalled until that is replayed).
 */
@Injectable()
export class AuditStreamBatches {
  constructor(
    private readonly repository: WebhooksRepository,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
  ) {}

  /** Returns how many deliveries it made. */
  async form(): Promise<number> {
    const ready = await this.transactions.run((m) => this.repository.streamsReadyForBatch(m));
    let made = 0;
    for (const endpointId of ready) {
      if (await this.formOne(endpointId)) made++;
    }
    return made;
  }

  private formOne(endpointId: number): Promise<boolean> {
    return this.transactions.run(async (m) => {
      for (;;) {
        const taken = await this.repository.takeStreamEntries(m, endpointId, STREAM_BATCH);
        if (!taken) return false;
        // Entries whose rows were pruned from the log before they were sent are left out.
        if (taken.events.length === 0) continue;
        const now = this.clock.now();
        await this.repository.insertDeliveries(m, [
          {
            endpointId,
            messageId: newMessageId(),
            eventType: STREAM_EVENT_TYPE,
            payload: streamBody(taken.events),
            nextAttemptAt: now,
            createdAt: now,
          },
        ]);
        return true;
      }
    });
  }
}
