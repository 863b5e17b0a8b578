import { Injectable, SetMetadata, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import type { EntityManager } from 'typeorm';
import { Clock } from '../clock/clock.js';
import { markedMethods } from '../common/discovery/marked-methods.js';
import { isReservedAddress } from '../common/reserved-address.js';
import { Events } from '../events/events.js';
import type { MailComposer } from './mail-message.js';
import { MailTemplates } from './mail-templates.js';
import { OutboxRepository } from './outbox.repository.js';

declare module '../events/events.js' {
  interface DomainEvents {
    /** Mail was put in the outbox (the sender of this process wakes once it is committed). */
    'mail.enqueued': Record<string, never>;
  }
}

const COMPOSES_MAIL = 'tessera:composes-mail';

/**
 * Marks a provider's method as the composer of `kind` messages: `(manager, { to, params })`,
 * called when a message is about to be sent (in a transaction of its own, so it may issue the
 * token its link carries), returning the message, or null when there is nothing to send any
 * more.
 */
export const ComposesMail = (kind: string) => SetMetadata(COMPOSES_MAIL, kind);

/**
 * What features send mail through. `send` writes the request (a kind, an address and a few ids,
 * never a secret) to the outbox (a row in `mail_outbox`) in the caller's transaction, so it goes
 * out only if the change commits; the message is made when it is sent, by the `@ComposesMail` method of its kind (found
 * on every provider at start), which writes its bodies with `render`.
 */
@Injectable()
export class Mailer implements OnModuleInit {
  private readonly composers = new Map<string, MailComposer>();

  constructor(
    private readonly outbox: OutboxRepository,
    private readonly events: Events,
    private readonly clock: Clock,
    private readonly templates: MailTemplates,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  private get tools() {
    return { discovery: this.discovery, scanner: this.scanner, reflector: this.reflector };
  }

  onModuleInit(): void {
    for (const { meta: kind, method } of markedMethods<string>(COMPOSES_MAIL, this.tools)) {
      this.composeWith(kind, method as MailComposer);
    }
  }

  /**
   * Asks for a `kind` message to `to`, in the caller's transaction. An address under the
   * reserved `.invalid` domain (a service account's) is never mailed: nothing is enqueued.
   */
  async send(
    manager: EntityManager,
    kind: string,
    to: string,
    params: Record<string, string | number> = {},
  ): Promise<void> {
    if (isReservedAddress(to)) return;
    await this.outbox.insert(manager, {
      kind,
      recipient: to,
      params: JSON.stringify(params),
      nextAttemptAt: this.clock.now(),
    });
    await this.events.publish(manager, 'mail.enqueued', {});
  }

  /**
   * Takes back, in the caller's transaction, the `kind` messages to `to` not sent yet: a change
   * that makes them wrong (a password changed after a reset was asked for) stops them. One being
   * made at that moment is waited for, and its link must be cancelled with it.
   */
  async withdraw(manager: EntityManager, kind: string, to: string): Promise<void> {
    await this.outbox.withdraw(manager, kind, to);
  }

  /** The text and HTML bodies of the template `views/mail/<name>`, in the mail's layout. */
  render(name: string, context: object): { text: string; html: string } {
    return this.templates.render(name, context);
  }

  /** The composer of `kind`, for the sender. */
  composerOf(kind: string): MailComposer | undefined {
    return this.composers.get(kind);
  }

  /** Adds a composer by hand (the decorator does it for the application's own). */
  composeWith(kind: string, composer: MailComposer): void {
    if (this.composers.has(kind)) throw new Error(`A composer for "${kind}" mail exists already`);
    this.composers.set(kind, composer);
  }
}
