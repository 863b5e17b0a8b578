import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';

@Entity({ name: 'users' })
export class User {
  @PrimaryGeneratedColumn({ name: 'id' })
  id!: number;

  @Column({ name: 'name', type: 'varchar', length: 255 })
  name!: string;

  /** Stored lower-cased, so the unique index compares case-insensitively on every database. */
  @Index('UQ_users_email', { unique: true })
  @Column({ name: 'email', type: 'varchar', length: 255 })
  email!: string;

  @Column({ name: 'password_hash', type: 'varchar', length: 255, nullable: true })
  passwordHash!: string | null;

  /** When the person followed the link mailed to their address; null until then. */
  @Column({ name: 'email_verified_at', type: 'datetime', precision: 3, nullable: true })
  emailVerifiedAt!: Date | null;

  /** Since when an operator has disabled the account (`user:disable`); null while enabled. */
  @Column({ name: 'disabled_at', type: 'datetime', precision: 3, nullable: true })
  disabledAt!: Date | null;

  @Column({ name: 'current_team_id', type: 'integer', nullable: true })
  currentTeamId!: number | null;

  /** The foreign key to `teams`, named rather than imported: users know nothing of teams. */
  @ManyToOne('Team', { onDelete: 'SET NULL', nullable: true })
  @JoinColumn({ name: 'current_team_id', foreignKeyConstraintName: 'FK_users_current_team' })
  currentTeam?: { id: number } | null;

  /**
   * Set for a service account: the team that owns it (deleted with the team). Such an account
   * has no password and signs in nowhere; only its tokens act, always in that team.
   */
  @Index('IDX_users_service_account_team')
  @Column({ name: 'service_account_team_id', type: 'integer', nullable: true })
  serviceAccountTeamId!: number | null;

  @ManyToOne('Team', { onDelete: 'CASCADE', nullable: true })
  @JoinColumn({
    name: 'service_account_team_id',
    foreignKeyConstraintName: 'FK_users_service_account_team',
  })
  serviceAccountTeam?: { id: number } | null;

  /** What a service account is for, as its team wrote it; null for a person. */
  @Column({ name: 'description', type: 'varchar', length: 500, nullable: true })
  description!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt!: Date;
}

/**
 * Whether the account is a team's service account: it has no password, mail or session, and
 * every sign-in path refuses it; only its tokens act.
 */
export function isServiceAccount(user: Pick<User, 'serviceAccountTeamId'>): boolean {
  return user.serviceAccountTeamId !== null && user.serviceAccountTeamId !== undefined;
}
