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
import { Team } from './team.entity.js';

export const TEAM_ROLES = ['owner', 'admin', 'member'] as const;
export type TeamRole = (typeof TEAM_ROLES)[number];

/** One row per (team, user): the primary key is the pair, so a user is in a team at most once. */
@Entity({ name: 'team_members' })
export class TeamMember {
  @PrimaryColumn({ name: 'team_id', type: 'integer' })
  teamId!: number;

  @Index('IDX_team_members_user')
  @PrimaryColumn({ name: 'user_id', type: 'integer' })
  userId!: number;

  @Column({ name: 'role', type: 'varchar', length: 20 })
  role!: TeamRole;

  /**
   * Counted up when a decision rests on this member's role without changing it, so that a
   * cluster sees the decision conflict with a concurrent change of the role (see
   * TeamsRepository.certifyRole).
   */
  @Column({ name: 'version', type: 'integer', default: 0 })
  version!: number;

  @ManyToOne(() => Team, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'team_id', foreignKeyConstraintName: 'FK_team_members_team' })
  team?: Relation<Team>;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'FK_team_members_user' })
  user?: Relation<User>;

  @CreateDateColumn({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;
}
