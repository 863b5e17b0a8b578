import type { DataSource } from 'typeorm';
import { WebhookDelivery } from '../../src/webhooks/webhook-delivery.entity.js';
import { waitFor } from './wait-for.js';

/**
 * The delivery of `messageId` once an attempt of it has been made and let go (its outcome
 * recorded). `when` names the moment for a failing spec's message (a ManualClock's time, say).
 */
export function attempted(
  dataSource: DataSource,
  messageId: string,
  when?: () => string,
): Promise<WebhookDelivery> {
  return waitFor(
    async () => {
      const row = await dataSource.getRepository(WebhookDelivery).findOneBy({ messageId });
      return row !== null && row.attempts >= 1 && row.claimedBy === null && row;
    },
    { message: () => `no attempt of ${messageId}${when ? ` at ${when()}` : ''}` },
  );
}
