import { Column, Entity, Index, JoinColumn, ManyToOne, OneToOne, PrimaryColumn } from 'typeorm';
import type { Relation } from 'typeorm';
import { Team } from '../teams/team.entity.js';
import { PersonalAccessToken } from './personal-access-token.entity.js';

/**
 * A token pinned to one team: it acts there whatever its person's current team. The row stays
 * when the team is deleted (`team_id` null), so the token is refused rather than following the
 * current team; it goes with the token.
 */
@Entity({ name: 'personal_access_token_pins' })
export class TokenPin {
  @PrimaryColumn({ name: 'token_id', type: 'integer' })
  tokenId!: number;

  @OneToOne(() => PersonalAccessToken, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'token_id', foreignKeyConstraintName: 'FK_personal_access_token_pins_token' })
  token?: Relation<PersonalAccessToken>;

  @Index('IDX_personal_access_token_pins_team')
  @Column({ name: 'team_id', type: 'integer', nullable: true })
  teamId!: number | null;

  @ManyToOne(() => Team, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'team_id', foreignKeyConstraintName: 'FK_personal_access_token_pins_team' })
  team?: Relation<Team> | null;
}
