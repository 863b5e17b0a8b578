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

/**
 * The most bytes of entries in one delivery: its row's `payload` is a TEXT column, at most
 * 65,535 bytes on MySQL/MariaDB. An entry takes a few kilobytes at most (its detail is cut to
 * 1000 characters), so a batch always has room for one.
 */
export const STREAM_BODY_MAX_BYTES = 60_000;

/** A batch's body: each entry as `audit:export` writes it, one JSON object a line. */
export function streamBody(events: AuditEvent[]): string {
  return events.map(lineOf).join('');
}

function lineOf(event: AuditEvent): string {
  return `${JSON.stringify(toExportLine(event))}\n`;
}

/**
 * What the stream's next batch takes of its waiting entries, oldest first: as many as fit in
 * `maxBytes` (one at least), and the entries pruned from the log among them, left out.
 */
export function nextBatch(
  waiting: { entryId: number; event: AuditEvent | undefined }[],
  maxBytes = STREAM_BODY_MAX_BYTES,
): { taken: number[]; events: AuditEvent[] } {
  const taken: number[] = [];
  const events: AuditEvent[] = [];
  let bytes = 0;
  for (const { entryId, event } of waiting) {
    if (event) {
      const size = Buffer.byteLength(lineOf(event));
      if (events.length > 0 && bytes + size > maxBytes) break;
      bytes += size;
      events.push(event);
    }
    taken.push(entryId);
  }
  return { taken, events };
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
        const waiting = await this.repository.waitingStreamEntries(m, endpointId, STREAM_BATCH);
        if (!waiting) return false;
        const { taken, events } = nextBatch(waiting);
        await this.repository.dropStreamEntries(m, taken);
        if (events.length === 0) continue;
        const now = this.clock.now();
        await this.repository.insertDeliveries(m, [
          {
            endpointId,
            messageId: newMessageId(),
            eventType: STREAM_EVENT_TYPE,
            payload: streamBody(events),
            nextAttemptAt: now,
            createdAt: now,
          },
        ]);
        return true;
      }
    });
  }
}
