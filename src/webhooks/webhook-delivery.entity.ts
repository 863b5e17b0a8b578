import {
  Column,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  type Relation,
} from 'typeorm';
import { WebhookEndpoint } from './webhook-endpoint.entity.js';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'dead'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * One event for one endpoint: written in the transaction of the change it reports (the
 * webhook outbox), claimed with a lease by the instance that sends it, as the mail outbox's
 * rows are, and kept 30 days as the endpoint's delivery log. `messageId` is the `webhook-id`
 * the receiver sees, the same on every attempt.
 */
@Entity({ name: 'webhook_deliveries' })
@Index('IDX_webhook_deliveries_due', ['status', 'nextAttemptAt'])
@Index('IDX_webhook_deliveries_endpoint', ['endpointId', 'id'])
@Index('IDX_webhook_deliveries_endpoint_status', ['endpointId', 'status'])
export class WebhookDelivery {
  @PrimaryGeneratedColumn({ name: 'id' })
  id!: number;

  @Column({ name: 'endpoint_id', type: 'integer' })
  endpointId!: number;

  @ManyToOne(() => WebhookEndpoint, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'endpoint_id', foreignKeyConstraintName: 'FK_webhook_deliveries_endpoint' })
  endpoint?: Relation<WebhookEndpoint>;

  @Column({ name: 'message_id', type: 'varchar', length: 40 })
  messageId!: string;

  @Column({ name: 'event_type', type: 'varchar', length: 60 })
  eventType!: string;

  /** The body sent, as sent: ids, names and times, never a token's value, hash or a secret. */
  @Column({ name: 'payload', type: 'text' })
  payload!: string;

  @Column({ name: 'status', type: 'varchar', length: 10, default: 'pending' })
  status!: DeliveryStatus;

  @Column({ name: 'attempts', type: 'integer', default: 0 })
  attempts!: number;

  @Column({ name: 'next_attempt_at', type: 'datetime', precision: 3 })
  nextAttemptAt!: Date;

  @Column({ name: 'claimed_until', type: 'datetime', precision: 3, nullable: true })
  claimedUntil!: Date | null;

  @Column({ name: 'claimed_by', type: 'varchar', length: 36, nullable: true })
  claimedBy!: string | null;

  /** The last attempt's HTTP status; null when it got none (refused, timed out). */
  @Column({ name: 'response_code', type: 'integer', nullable: true })
  responseCode!: number | null;

  @Column({ name: 'latency_ms', type: 'integer', nullable: true })
  latencyMs!: number | null;

  @Column({ name: 'last_error', type: 'varchar', length: 500, nullable: true })
  lastError!: string | null;

  /** The start of the last answer's body, at most 500 characters. */
  @Column({ name: 'response_excerpt', type: 'varchar', length: 500, nullable: true })
  responseExcerpt!: string | null;

  @Column({ name: 'delivered_at', type: 'datetime', precision: 3, nullable: true })
  deliveredAt!: Date | null;

  @Index('IDX_webhook_deliveries_created')
  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;
}
