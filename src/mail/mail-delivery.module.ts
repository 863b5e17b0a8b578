import { Module } from '@nestjs/common';
import { Clock } from '../clock/clock.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { createMailTransport, MailTransport } from './mail-transport.js';
import { OutboxSender } from './outbox-sender.js';

/** Sends the outbox's messages: over SMTP with MAIL_URL, else into .eml files. */
@Module({
  providers: [
    {
      provide: MailTransport,
      inject: [CONFIG, Clock],
      useFactory: (config: Config, clock: Clock) =>
        createMailTransport(config.mail, config.app.nodeEnv === 'production', clock),
    },
    OutboxSender,
  ],
  exports: [OutboxSender, MailTransport],
})
export class MailDeliveryModule {}
