import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { Clock } from '../clock/clock.js';
import { Events, OnEvent, type DomainEvents } from '../events/events.js';
import type { WebhookEndpoint } from './webhook-endpoint.entity.js';
import { payloadOf, webhookEventsOf, type WebhookEvent } from './webhook-events.js';
import { WebhooksRepository } from './webhooks.repository.js';

declare module '../events/events.js' {
  interface DomainEvents {
    /** Deliveries were written (the sender of this process wakes once they are committed). */
    'webhooks.enqueued': Record<string, never>;
  }
}

/** A `webhook-id`: one per event, the same for each endpoint and on every attempt. */
export function newMessageId(): string {
  return `msg_${randomBytes(16).toString('base64url')}`;
}

/**
 * The webhook outbox: for each security log entry that calls for events of version 1, one
 * delivery per active endpoint that chose the event (the team's and the operator's), written in
 * the transaction of the change itself, so that a change rolled back sends nothing.
 */
@Injectable()
export class WebhookOutbox {
  constructor(
    private readonly repository: WebhooksRepository,
    private readonly events: Events,
    private readonly clock: Clock,
  ) {}

  @OnEvent('audit.recording')
  async onAuditEntry(
    { actor, entry }: DomainEvents['audit.recording'],
    manager?: EntityManager,
  ): Promise<void> {
    const events = webhookEventsOf(actor, entry);
    for (const event of events) await this.enqueue(manager!, event);
  }

  /** Writes the event for every active endpoint that chose it; in the caller's transaction. */
  async enqueue(manager: EntityManager, event: WebhookEvent): Promise<void> {
    const endpoints = (await this.repository.findActiveFor(manager, event.teamId)).filter((e) =>
      e.events.split(',').includes(event.type),
    );
    await this.enqueueFor(manager, endpoints, event);
  }

  /**
   * Writes the event for these endpoints (a test event goes to one, whatever it chose), due now,
   * or for an endpoint backing off after a failure, when it is tried again.
   */
  async enqueueFor(
    manager: EntityManager,
    endpoints: (Pick<WebhookEndpoint, 'id'> & Partial<Pick<WebhookEndpoint, 'backoffUntil'>>)[],
    event: { type: string; at: Date; data: Record<string, unknown> },
  ): Promise<string | null> {
    if (endpoints.length === 0) return null;
    const messageId = newMessageId();
    const payload = payloadOf(event);
    const now = this.clock.now();
    await this.repository.insertDeliveries(
      manager,
      endpoints.map((e) => ({
        endpointId: e.id,
        messageId,
        eventType: event.type,
        payload,
        nextAttemptAt: e.backoffUntil && e.backoffUntil > now ? e.backoffUntil : now,
        createdAt: now,
      })),
    );
    await this.events.publish(manager, 'webhooks.enqueued', {});
    return messageId;
  }
}
