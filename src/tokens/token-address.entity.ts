import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { PersonalAccessToken } from './personal-access-token.entity.js';

/**
 * An IP address a token was used from, when last, and the User-Agent of that last use. Only a
 * token's most recent few are kept (TokenUsageRecorder trims the rest when it writes).
 */
@Entity({ name: 'personal_access_token_addresses' })
export class TokenAddress {
  @PrimaryColumn({ name: 'token_id', type: 'integer' })
  tokenId!: number;

  @PrimaryColumn({ name: 'ip', type: 'varchar', length: 45 })
  ip!: string;

  @Column({ name: 'last_used_at', type: 'datetime', precision: 3 })
  lastUsedAt!: Date;

  @Column({ name: 'user_agent', type: 'varchar', length: 255, nullable: true })
  userAgent!: string | null;

  @ManyToOne(() => PersonalAccessToken, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'token_id', foreignKeyConstraintName: 'FK_token_addresses_token' })
  token?: Relation<PersonalAccessToken>;
}
