import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { Clock } from '../clock/clock.js';
import { Events } from '../events/events.js';
import type { MailRequest } from './mail-message.js';
import { OutboxRepository } from './outbox.repository.js';

declare module '../events/events.js' {
  interface DomainEvents {
    /** Mail was put in the outbox (the sender of this process wakes once it is committed). */
    'mail.enqueued': Record<string, never>;
  }
}

/**
 * Where mail requests wait to be sent: a row in `mail_outbox`, written with the caller's
 * manager so it commits, or rolls back, with the change itself.
 */
@Injectable()
export class Outbox {
  constructor(
    private readonly messages: OutboxRepository,
    private readonly events: Events,
    private readonly clock: Clock,
  ) {}

  async enqueue(manager: EntityManager, request: MailRequest): Promise<void> {
    await this.messages.insert(manager, {
      kind: request.kind,
      recipient: request.to,
      params: JSON.stringify(request.params ?? {}),
      nextAttemptAt: this.clock.now(),
    });
    await this.events.publish(manager, 'mail.enqueued', {});
  }
}
