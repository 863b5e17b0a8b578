import { Column, Entity, Index, JoinColumn, OneToOne, PrimaryColumn, type Relation } from 'typeorm';
import { User } from '../users/user.entity.js';

/**
 * The user handle a person's passkeys carry: random, never the user id, so an authenticator
 * reveals nothing about the account; made with the first passkey and kept.
 */
@Entity({ name: 'passkey_user_handles' })
export class PasskeyUserHandle {
  @PrimaryColumn({ name: 'user_id', type: 'integer' })
  userId!: number;

  @OneToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'FK_passkey_user_handles_user' })
  user?: Relation<User>;

  /** base64url of 32 random bytes. */
  @Index('UQ_passkey_user_handles_handle', { unique: true })
  @Column({ name: 'handle', type: 'varchar', length: 64 })
  handle!: string;
}
