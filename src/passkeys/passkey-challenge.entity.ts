import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** What a challenge was handed out for. */
export type ChallengePurpose = 'register' | 'sign-in' | 'second-factor' | 'sudo';

/**
 * A challenge handed out for a passkey ceremony: used once (deleted by the statement that
 * accepts it), only by the session that asked for it, within five minutes. A session has at
 * most one per purpose: asking again replaces it.
 */
@Entity({ name: 'passkey_challenges' })
@Index('IDX_passkey_challenges_session', ['sessionHandle', 'purpose'])
export class PasskeyChallenge {
  /** base64url, as it goes to the browser. */
  @PrimaryColumn({ name: 'challenge', type: 'varchar', length: 64 })
  challenge!: string;

  /** A digest of the session's id (as the sessions page names sessions), never the id itself. */
  @Column({ name: 'session_handle', type: 'varchar', length: 64 })
  sessionHandle!: string;

  @Column({ name: 'purpose', type: 'varchar', length: 16 })
  purpose!: ChallengePurpose;

  /** The person it was asked for (adding a passkey, a second factor, sudo); null to sign in. */
  @Column({ name: 'user_id', type: 'integer', nullable: true })
  userId!: number | null;

  @Index('IDX_passkey_challenges_expiry')
  @Column({ name: 'expires_at', type: 'datetime', precision: 3 })
  expiresAt!: Date;
}
