import { Global, Module } from '@nestjs/common';
import { MailComposers } from './mail-composers.js';
import { MailTemplates } from './mail-templates.js';
import { OutboxRepository } from './outbox.repository.js';
import { Outbox } from './outbox.js';

/**
 * What features need to have mail sent: the outbox to enqueue in, the composers' registry and
 * the templates. Delivery is MailDeliveryModule's, in the HTTP app only: the command line
 * enqueues, the server sends.
 */
@Global()
@Module({
  providers: [OutboxRepository, Outbox, MailComposers, MailTemplates],
  exports: [OutboxRepository, Outbox, MailComposers, MailTemplates],
})
export class MailModule {}
