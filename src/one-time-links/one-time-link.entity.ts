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

export const LINK_PURPOSES = ['verify_email', 'reset_password', 'change_email'] as const;
export type LinkPurpose = (typeof LINK_PURPOSES)[number];

/** A single-use link sent by mail (or printed for an operator); only its SHA-256 is kept. */
@Entity({ name: 'account_tokens' })
@Index('IDX_account_tokens_user_purpose', ['userId', 'purpose'])
export class OneTimeLink {
  @PrimaryGeneratedColumn({ name: 'id' })
  id!: number;

  @Column({ name: 'user_id', type: 'integer' })
  userId!: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'FK_account_tokens_user' })
  user?: Relation<User>;

  @Column({ name: 'purpose', type: 'varchar', length: 20 })
  purpose!: LinkPurpose;

  @Index('UQ_account_tokens_hash', { unique: true })
  @Column({ name: 'token_hash', type: 'varchar', length: 64 })
  tokenHash!: string;

  /** For an e-mail change: the new address, the only one this link can set. */
  @Column({ name: 'email', type: 'varchar', length: 255, nullable: true })
  email!: string | null;

  @Column({ name: 'expires_at', type: 'datetime', precision: 3 })
  expiresAt!: Date;

  @Column({ name: 'used_at', type: 'datetime', precision: 3, nullable: true })
  usedAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;
}
