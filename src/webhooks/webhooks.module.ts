import { Module } from '@nestjs/common';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { TeamsModule } from '../teams/teams.module.js';
import { SecretCipher } from '../two-factor/secret-cipher.js';
import { AddressPolicy, WebhookResolver } from './address-policy.js';
import { AuditStreamOutbox } from './audit-stream-outbox.js';
import { WebhookOutbox } from './webhook-outbox.js';
import { WebhookSecrets } from './webhook-secrets.js';
import { WebhooksRepository } from './webhooks.repository.js';
import { WebhookSecretRotationService } from './webhook-secret-rotation.service.js';
import { WebhooksService } from './webhooks.service.js';

/**
 * Webhooks' domain, for the server and the command line alike: endpoints, and the outbox
 * written in the transaction of each team event (`audit.recording`), and the audit streams'
 * queue, written with each entry of the log (`audit.written`). Sending is
 * WebhookDeliveryModule's, in the server only.
 */
@Module({
  imports: [TeamsModule, RateLimitModule],
  providers: [
    WebhooksRepository,
    WebhookResolver,
    AddressPolicy,
    SecretCipher,
    WebhookSecrets,
    WebhookOutbox,
    AuditStreamOutbox,
    WebhooksService,
    WebhookSecretRotationService,
  ],
  exports: [
    WebhooksService,
    WebhookSecretRotationService,
    WebhooksRepository,
    AddressPolicy,
    WebhookSecrets,
    WebhookResolver,
  ],
})
export class WebhooksModule {}
