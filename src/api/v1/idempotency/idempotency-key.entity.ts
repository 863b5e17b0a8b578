import {
  Column,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  type Relation,
} from 'typeorm';
import { User } from '../../../users/user.entity.js';

/**
 * An `Idempotency-Key` a client sent with a POST, per account: claimed by the first request
 * (the unique index decides between instances), then holding that request's answer for 24
 * hours. Keys and bodies are stored as SHA-256 digests, never as sent.
 */
@Entity({ name: 'api_idempotency_keys' })
@Index('UQ_api_idempotency_keys_user_key', ['userId', 'keyHash'], { unique: true })
export class IdempotencyKey {
  @PrimaryGeneratedColumn({ name: 'id' })
  id!: number;

  @Column({ name: 'user_id', type: 'integer' })
  userId!: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'FK_api_idempotency_keys_user' })
  user?: Relation<User>;

  @Column({ name: 'key_hash', type: 'varchar', length: 64 })
  keyHash!: string;

  /** The method, path and body the key was first used with. */
  @Column({ name: 'request_hash', type: 'varchar', length: 64 })
  requestHash!: string;

  /** The first answer's status; null while that request is under way. */
  @Column({ name: 'status_code', type: 'integer', nullable: true })
  statusCode!: number | null;

  /** The first answer's JSON. */
  @Column({ name: 'answer', type: 'text', nullable: true })
  answer!: string | null;

  /** Until when the request under way holds the key; past it (its instance died) another may. */
  @Column({ name: 'locked_until', type: 'datetime', precision: 3, nullable: true })
  lockedUntil!: Date | null;

  @Index('IDX_api_idempotency_keys_created')
  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;
}
