import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { PersonalAccessToken } from './personal-access-token.entity.js';

/** How many requests a token authenticated on one UTC day; rows go with their token. */
@Entity({ name: 'personal_access_token_daily_usage' })
export class TokenDailyUsage {
  @PrimaryColumn({ name: 'token_id', type: 'integer' })
  tokenId!: number;

  /** The UTC day, `YYYY-MM-DD`. */
  @PrimaryColumn({ name: 'day', type: 'date', utc: true })
  day!: string;

  @Column({ name: 'requests', type: 'integer', default: 0 })
  requests!: number;

  @ManyToOne(() => PersonalAccessToken, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'token_id', foreignKeyConstraintName: 'FK_token_daily_usage_token' })
  token?: Relation<PersonalAccessToken>;
}
