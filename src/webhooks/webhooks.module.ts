import { Module } from '@nestjs/common';
import { TeamsModule } from '../teams/teams.module.js';
import { SecretCipher } from '../two-factor/secret-cipher.js';
import { AddressPolicy, WebhookResolver } from './address-policy.js';
import { WebhookOutbox } from './webhook-outbox.js';
import { WebhookSecrets } from './webhook-secrets.js';
import { WebhooksRepository } from './webhooks.repository.js';
import { WebhooksService } from './webhooks.service.js';

/**
 * Webhooks' domain, for the server and the command line alike: endpoints, and the outbox
 * written in the transaction of each team event (`audit.recording`). Sending is
 * WebhookDeliveryModule's, in the server only.
 */
@Module({
  imports: [TeamsModule],
  providers: [
    WebhooksRepository,
    WebhookResolver,
    AddressPolicy,
    SecretCipher,
    WebhookSecrets,
    WebhookOutbox,
    WebhooksService,
  ],
  exports: [WebhooksService, WebhooksRepository, AddressPolicy, WebhookSecrets, WebhookResolver],
})
export class WebhooksModule {}
