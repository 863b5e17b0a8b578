import {
  Column,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  type Relation,
} from 'typeorm';
import { Team } from '../teams/team.entity.js';
import { User } from '../users/user.entity.js';

export const ENDPOINT_STATUSES = ['active', 'disabled'] as const;
export type EndpointStatus = (typeof ENDPOINT_STATUSES)[number];
export const ENDPOINT_KINDS = ['events', 'audit_stream'] as const;
export type EndpointKind = (typeof ENDPOINT_KINDS)[number];

/**
 * Where a team's events (or, with no team, the instance's) are sent: an HTTPS URL, the events
 * chosen, and its signing secret, encrypted at rest as two-factor secrets are. After a rotation
 * the previous secret signs too until `previousSecretUntil`.
 */
@Entity({ name: 'webhook_endpoints' })
@Index('UQ_webhook_endpoints_uid', ['uid'], { unique: true })
@Index('UQ_webhook_endpoints_config_key', ['configKey'], { unique: true })
@Index('IDX_webhook_endpoints_kind_status_team', ['kind', 'status', 'teamId'])
export class WebhookEndpoint {
  @PrimaryGeneratedColumn({ name: 'id' })
  id!: number;

  /** A random name, what its secret's encryption is bound to. */
  @Column({ name: 'uid', type: 'varchar', length: 32 })
  uid!: string;

  /** The team whose events it gets; null: the operator's, for every team's. */
  @Index('IDX_webhook_endpoints_team')
  @Column({ name: 'team_id', type: 'integer', nullable: true })
  teamId!: number | null;

  @ManyToOne(() => Team, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'team_id', foreignKeyConstraintName: 'FK_webhook_endpoints_team' })
  team?: Relation<Team>;

  /**
   * `events`: the chosen events, one by one; `audit_stream`: every entry of the audit log, in
   * order, in batches of JSON lines.
   */
  @Column({ name: 'kind', type: 'varchar', length: 16, default: 'events' })
  kind!: EndpointKind;

  @Column({ name: 'url', type: 'varchar', length: 2048 })
  url!: string;

  /** The chosen event types, separated by commas. */
  @Column({ name: 'events', type: 'text' })
  events!: string;

  @Column({ name: 'secret', type: 'varchar', length: 200 })
  secret!: string;

  /**
   * An audit stream's Authorization header value for its collector (`Splunk <token>`, say),
   * encrypted as the secret is; null: none.
   */
  @Column({ name: 'authorization_header', type: 'varchar', length: 1200, nullable: true })
  authorizationHeader!: string | null;

  @Column({ name: 'previous_secret', type: 'varchar', length: 200, nullable: true })
  previousSecret!: string | null;

  @Column({ name: 'previous_secret_until', type: 'datetime', precision: 3, nullable: true })
  previousSecretUntil!: Date | null;

  @Column({ name: 'status', type: 'varchar', length: 10, default: 'active' })
  status!: EndpointStatus;

  @Column({ name: 'disabled_reason', type: 'varchar', length: 200, nullable: true })
  disabledReason!: string | null;

  /** When its deliveries started failing without a success since; null while they succeed. */
  @Column({ name: 'failing_since', type: 'datetime', precision: 3, nullable: true })
  failingSince!: Date | null;

  /**
   * While its deliveries fail: when the one that failed last is tried again. Its other
   * deliveries, and new ones, wait until then instead of each holding a place of the sender for
   * another attempt the endpoint would fail too. Null while they succeed.
   */
  @Column({ name: 'backoff_until', type: 'datetime', precision: 3, nullable: true })
  backoffUntil!: Date | null;

  /**
   * For the operator's endpoints listed in WEBHOOK_ENDPOINTS (read-only elsewhere): a digest of
   * the URL that names them there. Null for those registered on the pages or the command line.
   */
  @Column({ name: 'config_key', type: 'varchar', length: 64, nullable: true })
  configKey!: string | null;

  @Column({ name: 'created_by_id', type: 'integer', nullable: true })
  createdById!: number | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL' })
  @JoinColumn({
    name: 'created_by_id',
    foreignKeyConstraintName: 'FK_webhook_endpoints_created_by',
  })
  createdBy?: Relation<User>;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;
}
