import {
  Column,
  CreateDateColumn,
  Entity,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  type Relation,
} from 'typeorm';
import { User } from '../users/user.entity.js';

/** A person's authenticator, once a code has confirmed it: one row per person at most. */
@Entity({ name: 'two_factor_credentials' })
export class TwoFactorCredential {
  @PrimaryColumn({ name: 'user_id', type: 'integer' })
  userId!: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'FK_two_factor_credentials_user' })
  user?: Relation<User>;

  /** The TOTP secret encrypted by SecretCipher, bound to the user id; never the secret itself. */
  @Column({ name: 'secret', type: 'varchar', length: 255 })
  secret!: string;

  /** The time step of the last code accepted: it and every earlier one are refused. */
  @Column({ name: 'last_used_step', type: 'integer', nullable: true })
  lastUsedStep!: number | null;

  @CreateDateColumn({ name: 'enabled_at', type: 'datetime', precision: 3 })
  enabledAt!: Date;
}
