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

/** Whether a counter or id column comes back as a string (MySQL's BIGINT) or a number. */
const bigintAsNumber = {
  to: (value: number) => value,
  from: (value: string | number | null) => (value === null ? 0 : Number(value)),
};

/**
 * A passkey: a WebAuthn credential a person's device or password manager holds, of which only
 * the public key is stored. `counter` is the authenticator's signature counter as last seen: one
 * that goes backwards is refused (a cloned authenticator); many passkeys keep it at 0.
 */
@Entity({ name: 'passkeys' })
export class Passkey {
  @PrimaryGeneratedColumn({ name: 'id' })
  id!: number;

  @Index('IDX_passkeys_user')
  @Column({ name: 'user_id', type: 'integer' })
  userId!: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'FK_passkeys_user' })
  user?: Relation<User>;

  /** base64url, as the browser names it. */
  @Index('UQ_passkeys_credential', { unique: true })
  @Column({ name: 'credential_id', type: 'varchar', length: 255 })
  credentialId!: string;

  /** The COSE public key, base64url. */
  @Column({ name: 'public_key', type: 'text' })
  publicKey!: string;

  @Column({ name: 'counter', type: 'bigint', default: 0, transformer: bigintAsNumber })
  counter!: number;

  /** How the browser may reach it (`internal`, `hybrid`, `usb`…), comma-separated. */
  @Column({ name: 'transports', type: 'varchar', length: 255, nullable: true })
  transports!: string | null;

  /** `singleDevice`, or `multiDevice` (synced, as a password manager's are). */
  @Column({ name: 'device_type', type: 'varchar', length: 32 })
  deviceType!: string;

  /** Whether it is backed up (synced) now; it may change from one use to the next. */
  @Column({ name: 'backed_up', type: 'boolean', default: false })
  backedUp!: boolean;

  /** The authenticator's model (AAGUID), when it says; all zeros when it does not. */
  @Column({ name: 'aaguid', type: 'varchar', length: 36, nullable: true })
  aaguid!: string | null;

  @Column({ name: 'name', type: 'varchar', length: 100 })
  name!: string;

  @CreateDateColumn({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @Column({ name: 'last_used_at', type: 'datetime', precision: 3, nullable: true })
  lastUsedAt!: Date | null;
}
