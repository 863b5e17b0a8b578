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
import { Team } from '../teams/team.entity.js';
import { User } from '../users/user.entity.js';

export const INVITATION_STATUSES = ['pending', 'accepted', 'declined', 'revoked'] as const;
export type InvitationStatus = (typeof INVITATION_STATUSES)[number];

/**
 * An invitation to a team, for one address: at most one per team and address, made pending
 * again when the address is invited anew. Its link's token is stored only as its SHA-256, and
 * issued when the mail is sent, so a resent mail replaces the link.
 */
@Entity({ name: 'team_invitations' })
@Index('UQ_team_invitations_team_email', ['teamId', 'email'], { unique: true })
export class TeamInvitation {
  @PrimaryGeneratedColumn({ name: 'id' })
  id!: number;

  @Column({ name: 'team_id', type: 'integer' })
  teamId!: number;

  @ManyToOne(() => Team, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'team_id', foreignKeyConstraintName: 'FK_team_invitations_team' })
  team?: Relation<Team>;

  /** Lower-cased, as users' addresses are. */
  @Index('IDX_team_invitations_email')
  @Column({ name: 'email', type: 'varchar', length: 255 })
  email!: string;

  @Column({ name: 'role', type: 'varchar', length: 20 })
  role!: 'member' | 'admin';

  @Column({ name: 'invited_by_id', type: 'integer', nullable: true })
  invitedById!: number | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL', nullable: true })
  @JoinColumn({ name: 'invited_by_id', foreignKeyConstraintName: 'FK_team_invitations_invited_by' })
  invitedBy?: Relation<User> | null;

  @Index('UQ_team_invitations_token_hash', { unique: true })
  @Column({ name: 'token_hash', type: 'varchar', length: 64, nullable: true })
  tokenHash!: string | null;

  @Column({ name: 'status', type: 'varchar', length: 10 })
  status!: InvitationStatus;

  /** The account that registered from this invitation's link, joining once its address is confirmed. */
  @Column({ name: 'claimed_by_id', type: 'integer', nullable: true })
  claimedById!: number | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL', nullable: true })
  @JoinColumn({ name: 'claimed_by_id', foreignKeyConstraintName: 'FK_team_invitations_claimed_by' })
  claimedBy?: Relation<User> | null;

  @Column({ name: 'expires_at', type: 'datetime', precision: 3 })
  expiresAt!: Date;

  @Column({ name: 'responded_at', type: 'datetime', precision: 3, nullable: true })
  respondedAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;
}
