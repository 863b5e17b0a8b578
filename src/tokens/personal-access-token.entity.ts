import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  type Relation,
} from 'typeorm';
import { User } from '../users/user.entity.js';
import type { Ability } from './abilities.js';

@Entity({ name: 'personal_access_tokens' })
@Index('IDX_personal_access_tokens_expiry', ['expiryNotices', 'expiresAt'])
export class PersonalAccessToken {
  @PrimaryGeneratedColumn({ name: 'id' })
  id!: number;

  @Index('IDX_personal_access_tokens_user')
  @Column({ name: 'user_id', type: 'integer' })
  userId!: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'FK_personal_access_tokens_user' })
  user?: Relation<User>;

  /**
   * Who made it, when that was not its own account (a service account's tokens are made by its
   * team's owners and admins); null otherwise, and once that person's account is deleted.
   */
  @Index('IDX_personal_access_tokens_created_by')
  @Column({ name: 'created_by_id', type: 'integer', nullable: true })
  createdById!: number | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL', nullable: true })
  @JoinColumn({
    name: 'created_by_id',
    foreignKeyConstraintName: 'FK_personal_access_tokens_created_by',
  })
  createdBy?: Relation<User> | null;

  @Column({ name: 'name', type: 'varchar', length: 255 })
  name!: string;

  /** SHA-256 of the token in hex; the token itself is never stored. */
  @Index('UQ_personal_access_tokens_hash', { unique: true })
  @Column({ name: 'token_hash', type: 'varchar', length: 64 })
  tokenHash!: string;

  @Column({ name: 'last_four', type: 'varchar', length: 4 })
  lastFour!: string;

  /**
   * The value this one replaced when the token was last regenerated: still accepted until
   * `previousValidUntil`, then refused as revoked (not as unknown) until the next regeneration.
   */
  @Index('UQ_personal_access_tokens_previous_hash', { unique: true })
  @Column({ name: 'previous_token_hash', type: 'varchar', length: 64, nullable: true })
  previousTokenHash!: string | null;

  @Column({ name: 'previous_valid_until', type: 'datetime', precision: 3, nullable: true })
  previousValidUntil!: Date | null;

  /** Requests made with the previous value since the last regeneration, and the latest one. */
  @Column({ name: 'previous_requests', type: 'integer', default: 0 })
  previousRequests!: number;

  @Column({ name: 'previous_last_used_at', type: 'datetime', precision: 3, nullable: true })
  previousLastUsedAt!: Date | null;

  @Column({ name: 'abilities', type: 'simple-array' })
  abilities!: Ability[];

  @Column({ name: 'expires_at', type: 'datetime', precision: 3, nullable: true })
  expiresAt!: Date | null;

  /**
   * The lifetime its person chose for the current value, in whole days: the days asked for, or
   * those from the day it was made (UTC) to the date asked for; null when it never expires. A
   * team's maximum is compared with this, not with the stored times.
   */
  @Column({ name: 'lifetime_days', type: 'integer', nullable: true })
  lifetimeDays!: number | null;

  /**
   * How far the owner has been told of the expiry: 0 nothing yet, 1 the reminder a week before,
   * 2 the one on the day, 3 the expiry recorded in the security log. Back to 0 on regeneration.
   */
  @Column({ name: 'expiry_notices', type: 'integer', default: 0 })
  expiryNotices!: number;

  @Column({ name: 'last_used_at', type: 'datetime', precision: 3, nullable: true })
  lastUsedAt!: Date | null;

  @Column({ name: 'revoked_at', type: 'datetime', precision: 3, nullable: true })
  revokedAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  /** When the value was last replaced; a regenerated token's lifetime is counted from here. */
  @Column({ name: 'regenerated_at', type: 'datetime', precision: 3, nullable: true })
  regeneratedAt!: Date | null;
}
