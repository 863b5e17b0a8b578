import { Injectable, SetMetadata, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import type { EntityManager } from 'typeorm';
import { markedMethods } from '../common/discovery/marked-methods.js';
import { Transactions } from '../database/transactions.js';

/**
 * What happened, by name, with what it carries. Each feature adds the events it publishes with
 * declaration merging (`declare module '../events/events.js' { interface DomainEvents {…} }`),
 * so this foundation names none of them.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface DomainEvents {}

export type EventName = keyof DomainEvents;

type Handler = (event: never, manager?: EntityManager) => unknown;

interface Subscription {
  /** In the publishing transaction (a rollback undoes the handler's writes), or after its commit. */
  when: 'in-transaction' | 'after-commit';
  handler: Handler;
}

const ON_EVENT = 'tessera:on-event';

/**
 * Marks a provider's method as a handler of `name`: `(event, manager)`. By default it runs
 * inside the publishing transaction, with its manager, so what it writes commits or rolls back
 * with the change; with `afterCommit` it runs, `(event)` alone, once the change is committed (to
 * wake a worker, say), and never when it rolls back.
 */
export const OnEvent = (name: EventName, options: { afterCommit?: boolean } = {}) =>
  SetMetadata(ON_EVENT, {
    name,
    when: options.afterCommit ? 'after-commit' : 'in-transaction',
  });

/**
 * The one event dispatcher: a feature publishes what happened in its transaction, and the
 * features that care (mail, invitations, the mail sender) subscribe with `@OnEvent`, found on
 * every provider when the application starts. Handlers in the transaction run one after the
 * other, in the order the modules were registered; one that throws rolls the change back.
 */
@Injectable()
export class Events implements OnModuleInit {
  private readonly subscriptions = new Map<string, Subscription[]>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly transactions: Transactions,
  ) {}

  private get tools() {
    return { discovery: this.discovery, scanner: this.scanner, reflector: this.reflector };
  }

  onModuleInit(): void {
    const marked = markedMethods<{ name: string; when: Subscription['when'] }>(
      ON_EVENT,
      this.tools,
    );
    for (const { meta, method } of marked) {
      const list = this.subscriptions.get(meta.name) ?? [];
      list.push({ when: meta.when, handler: method as Handler });
      this.subscriptions.set(meta.name, list);
    }
  }

  /** Tells every subscriber of `name`, inside the transaction `manager` belongs to. */
  async publish<K extends EventName>(
    manager: EntityManager,
    name: K,
    event: DomainEvents[K],
  ): Promise<void> {
    for (const { when, handler } of this.subscriptions.get(name) ?? []) {
      if (when === 'in-transaction') await handler(event as never, manager);
      else this.transactions.afterCommit(manager, () => void handler(event as never));
    }
  }
}
