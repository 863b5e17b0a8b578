import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  type Relation,
} from 'typeorm';
import { User } from '../users/user.entity.js';

/** A signed-in (or about to sign in) browser session, shared by every instance. */
@Entity({ name: 'sessions' })
export class Session {
  @PrimaryColumn({ name: 'id', type: 'varchar', length: 128 })
  id!: string;

  @Index('IDX_sessions_user')
  @Column({ name: 'user_id', type: 'integer', nullable: true })
  userId!: number | null;

  @ManyToOne(() => User, { onDelete: 'CASCADE', nullable: true })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'FK_sessions_user' })
  user?: Relation<User> | null;

  /** The express-session data as JSON: the user id, the CSRF token, flash messages. */
  @Column({ name: 'data', type: 'text' })
  data!: string;

  /**
   * Counted up by every write of `data`: a request whose session was written by another since
   * it read it merges what it changed into the row as it is now.
   */
  @Column({ name: 'version', type: 'integer', default: 0 })
  version!: number;

  @Index('IDX_sessions_expires_at')
  @Column({ name: 'expires_at', type: 'datetime', precision: 3 })
  expiresAt!: Date;

  /** The browser's User-Agent, as it last sent it (cut to 255 characters). */
  @Column({ name: 'user_agent', type: 'varchar', length: 255, nullable: true })
  userAgent!: string | null;

  @Column({ name: 'ip', type: 'varchar', length: 45, nullable: true })
  ip!: string | null;

  /** Written at most once a minute per session, not on every page. */
  @Column({ name: 'last_active_at', type: 'datetime', precision: 3, nullable: true })
  lastActiveAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;
}
