import { Module } from '@nestjs/common';
import { AuditStreamBatches } from './audit-stream-batches.js';
import { ConfiguredEndpoints } from './configured-endpoints.js';
import { EndpointHealth } from './endpoint-health.js';
import { WebhookHttp } from './webhook-http.js';
import { WebhookSender } from './webhook-sender.js';
import { WebhooksModule } from './webhooks.module.js';

/**
 * Sends the webhook outbox (Standard Webhooks' signed deliveries, retried, dead-lettered) and
 * disables endpoints that are gone, and registers the operator's endpoints WEBHOOK_ENDPOINTS
 * lists: in the server, as MailDeliveryModule sends mail.
 */
@Module({
  imports: [WebhooksModule],
  providers: [WebhookHttp, EndpointHealth, AuditStreamBatches, WebhookSender, ConfiguredEndpoints],
  exports: [WebhookSender],
})
export class WebhookDeliveryModule {}
