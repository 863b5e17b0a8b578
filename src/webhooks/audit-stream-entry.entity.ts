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

/**
 * An audit log entry waiting for an audit stream: written in the transaction that writes the
 * entry to the log, so that no entry is passed over whatever order transactions commit in, and
 * taken (deleted) into the stream's next delivery, oldest first. No foreign key to the log: an
 * entry pruned before it was sent is left out.
 */
@Entity({ name: 'audit_stream_entries' })
@Index('IDX_audit_stream_entries_endpoint', ['endpointId', 'id'])
export class AuditStreamEntry {
  @PrimaryGeneratedColumn({ name: 'id' })
  id!: number;

  @Column({ name: 'endpoint_id', type: 'integer' })
  endpointId!: number;

  @ManyToOne(() => WebhookEndpoint, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'endpoint_id', foreignKeyConstraintName: 'FK_audit_stream_entries_endpoint' })
  endpoint?: Relation<WebhookEndpoint>;

  @Column({ name: 'audit_event_id', type: 'integer' })
  auditEventId!: number;
}
