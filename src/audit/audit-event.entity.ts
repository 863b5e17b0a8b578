import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * One line of the security log: who did what, to what, when, from where. Rows are only ever
 * added, and removed when older than AUDIT_RETENTION_DAYS. No foreign keys: the log outlives
 * the tokens, teams and accounts it names. Never a secret, never a whole token.
 */
@Entity({ name: 'audit_events' })
@Index('IDX_audit_events_user_time', ['userId', 'occurredAt', 'id'])
@Index('IDX_audit_events_actor_time', ['actorUserId', 'occurredAt', 'id'])
@Index('IDX_audit_events_team_time', ['teamId', 'occurredAt', 'id'])
@Index('IDX_audit_events_occurred', ['occurredAt'])
export class AuditEvent {
  @PrimaryGeneratedColumn({ name: 'id' })
  id!: number;

  @Column({ name: 'occurred_at', type: 'datetime', precision: 3 })
  occurredAt!: Date;

  /** A stable name, `<kind>.<what>` (AUDIT_EVENTS). */
  @Column({ name: 'event', type: 'varchar', length: 64 })
  event!: string;

  /** Who acted: a person (signed in or by one of their tokens); null for no one signed in, the operator or Tessera itself. */
  @Column({ name: 'actor_user_id', type: 'integer', nullable: true })
  actorUserId!: number | null;

  /** `user`, `token`, `operator`, `system` or `anonymous`. */
  @Column({ name: 'actor_kind', type: 'varchar', length: 16 })
  actorKind!: string;

  /** The account the event is about, in whose security log it appears. */
  @Column({ name: 'user_id', type: 'integer', nullable: true })
  userId!: number | null;

  /** The team it happened in, in whose audit log it appears. */
  @Column({ name: 'team_id', type: 'integer', nullable: true })
  teamId!: number | null;

  /** The token it was done with or to. */
  @Column({ name: 'token_id', type: 'integer', nullable: true })
  tokenId!: number | null;

  /** The browser session it came from, by its handle (a digest, never the session's id). */
  @Column({ name: 'session_handle', type: 'varchar', length: 43, nullable: true })
  sessionHandle!: string | null;

  /** What it was done to: `token`, `user`, `team`, `invitation`, `session`. */
  @Column({ name: 'target_type', type: 'varchar', length: 16, nullable: true })
  targetType!: string | null;

  @Column({ name: 'target_id', type: 'integer', nullable: true })
  targetId!: number | null;

  /** A few named facts as JSON (a token's name, a role, why something was refused). */
  @Column({ name: 'detail', type: 'varchar', length: 1000, nullable: true })
  detail!: string | null;

  @Column({ name: 'ip', type: 'varchar', length: 45, nullable: true })
  ip!: string | null;

  @Column({ name: 'user_agent', type: 'varchar', length: 255, nullable: true })
  userAgent!: string | null;
}
