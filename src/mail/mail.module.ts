import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { MailTemplates } from './mail-templates.js';
import { Mailer } from './mailer.js';
import { OutboxRepository } from './outbox.repository.js';

/**
 * What features need to have mail sent: the Mailer. Delivery is MailDeliveryModule's, in the
 * HTTP app only: the command line enqueues, the server sends.
 */
@Global()
@Module({
  imports: [DiscoveryModule],
  providers: [OutboxRepository, MailTemplates, Mailer],
  exports: [OutboxRepository, Mailer],
})
export class MailModule {}
