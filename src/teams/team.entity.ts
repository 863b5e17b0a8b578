import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
  type Relation,
} from 'typeorm';
import type { TeamRecord } from '../common/actor.js';
import { User } from '../users/user.entity.js';

@Entity({ name: 'teams' })
export class Team implements TeamRecord {
  @PrimaryGeneratedColumn({ name: 'id' })
  id!: number;

  @Column({ name: 'name', type: 'varchar', length: 255 })
  name!: string;

  @Index('UQ_teams_slug', { unique: true })
  @Column({ name: 'slug', type: 'varchar', length: 100 })
  slug!: string;

  @Index('IDX_teams_owner')
  @Column({ name: 'owner_id', type: 'integer' })
  ownerId!: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'owner_id', foreignKeyConstraintName: 'FK_teams_owner' })
  owner?: Relation<User>;

  @Column({ name: 'personal', type: 'boolean', default: false })
  personal!: boolean;

  /** Members' tokens are refused in this team until their person turns two-factor sign-in on. */
  @Column({ name: 'require_two_factor', type: 'boolean', default: false })
  requireTwoFactor!: boolean;

  /** Tokens living longer than this (from creation or last regeneration) are refused here. */
  @Column({ name: 'token_max_lifetime_days', type: 'integer', nullable: true })
  tokenMaxLifetimeDays!: number | null;

  /**
   * The abilities tokens acting here may use, comma-separated; null for every ability the
   * deployment offers. A token calling an endpoint whose ability is not here is refused (403).
   */
  @Column({
    name: 'allowed_abilities',
    type: 'text',
    nullable: true,
    transformer: {
      to: (names: string[] | null | undefined) => (names ? names.join(',') : names),
      from: (stored: string | null) => (stored === null ? null : stored.split(',')),
    },
  })
  allowedAbilities!: string[] | null;

  /**
   * How many service accounts the team has: counted up only by a conditional update that keeps
   * it within the deployment's limit, and down when one is deleted.
   */
  @Column({ name: 'service_account_count', type: 'integer', default: 0 })
  serviceAccountCount!: number;

  /**
   * How many webhook endpoints and audit streams the team has: counted up only by a conditional
   * update that keeps it within the deployment's limit, and down when one is deleted.
   */
  @Column({ name: 'webhook_endpoint_count', type: 'integer', default: 0 })
  webhookEndpointCount!: number;

  @CreateDateColumn({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt!: Date;
}
