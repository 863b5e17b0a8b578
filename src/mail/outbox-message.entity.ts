import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

export const OUTBOX_STATUSES = ['pending', 'sent', 'failed', 'dropped'] as const;
export type OutboxStatus = (typeof OUTBOX_STATUSES)[number];

/**
 * A message to send, written in the same transaction as the change that calls for it. It holds
 * what the message is about (`kind`, `params`), never a secret: the message, and any link in it,
 * is made when it is sent.
 */
@Entity({ name: 'mail_outbox' })
@Index('IDX_mail_outbox_due', ['status', 'nextAttemptAt'])
@Index('IDX_mail_outbox_recipient', ['recipient', 'kind'])
export class OutboxMessage {
  @PrimaryGeneratedColumn({ name: 'id' })
  id!: number;

  /** Which composer makes the message (`verify-email`, `password-reset`…). */
  @Column({ name: 'kind', type: 'varchar', length: 40 })
  kind!: string;

  @Column({ name: 'recipient', type: 'varchar', length: 255 })
  recipient!: string;

  /** JSON for the composer: ids, never a token or a password. */
  @Column({ name: 'params', type: 'text' })
  params!: string;

  @Column({ name: 'status', type: 'varchar', length: 10, default: 'pending' })
  status!: OutboxStatus;

  @Column({ name: 'attempts', type: 'integer', default: 0 })
  attempts!: number;

  @Column({ name: 'next_attempt_at', type: 'datetime', precision: 3 })
  nextAttemptAt!: Date;

  /** While an instance sends the message, no other takes it; a lease that lapses if it dies. */
  @Column({ name: 'claimed_until', type: 'datetime', precision: 3, nullable: true })
  claimedUntil!: Date | null;

  @Column({ name: 'claimed_by', type: 'varchar', length: 36, nullable: true })
  claimedBy!: string | null;

  @Column({ name: 'last_error', type: 'varchar', length: 500, nullable: true })
  lastError!: string | null;

  @Column({ name: 'sent_at', type: 'datetime', precision: 3, nullable: true })
  sentAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;
}
