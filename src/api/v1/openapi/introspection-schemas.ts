import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ABILITY_NAME } from '../../../config/abilities.config.js';
import { TeamSchema } from './schemas.js';

@ApiSchema({ name: 'IntrospectedAccount', description: "The token's account." })
export class IntrospectedAccountSchema {
  @ApiProperty({ type: 'integer', minimum: 1, example: 40 })
  id!: number;
  @ApiProperty({ minLength: 1, example: 'deploy-bot' })
  name!: string;
  @ApiProperty({ enum: ['person', 'service_account'], example: 'service_account' })
  type!: string;
}

@ApiSchema({
  name: 'IntrospectionRefusal',
  description: 'Why the API would refuse the token: one of its own 403 codes, and its words.',
})
export class IntrospectionRefusalSchema {
  @ApiProperty({
    enum: [
      'team_access_lost',
      'two_factor_required',
      'token_lifetime_exceeds_policy',
      'insufficient_scope',
      'ability_not_allowed_by_team',
      'forbidden',
    ],
    example: 'insufficient_scope',
  })
  code!: string;
  @ApiProperty({ example: 'The token lacks the "invoices:write" ability.' })
  message!: string;
}

@ApiSchema({
  name: 'Introspection',
  description:
    "RFC 7662's answer, with Tessera's own members. A token that is unknown, malformed, revoked, expired, or acting in another team than the caller's is `{\"active\": false}` and nothing more, which never says whether it exists; one acting in the caller's team that the team refuses is inactive with the `refusal`.",
})
export class IntrospectionSchema {
  @ApiProperty({
    type: Boolean,
    description: "Whether the API would accept the token now, acting in the caller's team.",
  })
  active!: boolean;
  @ApiPropertyOptional({
    description: 'The abilities it may use in the team now, separated by spaces.',
    example: 'team:read invoices:write',
  })
  scope?: string;
  @ApiPropertyOptional({ enum: ['bearer'] })
  token_type?: string;
  @ApiPropertyOptional({
    type: 'integer',
    description:
      'When it stops working, in seconds since 1970 (UTC); absent when it never does. For a value replaced by a regeneration, the end of its grace period.',
    example: 1796083200,
  })
  exp?: number;
  @ApiPropertyOptional({
    type: 'integer',
    description:
      'When its current value was made (created or regenerated), in seconds since 1970; absent for a value replaced by a regeneration, in its grace period.',
    example: 1793491200,
  })
  iat?: number;
  @ApiPropertyOptional({ description: "Its account's id, as text.", example: '40' })
  sub?: string;
  @ApiPropertyOptional({
    description:
      "Its account's address (a service account's is under `.invalid` and receives no mail).",
    example: 'deploy-bot-40@team-3.service-accounts.invalid',
  })
  username?: string;
  @ApiPropertyOptional({ type: 'integer', minimum: 1, example: 31 })
  token_id?: number;
  @ApiPropertyOptional({ type: IntrospectedAccountSchema })
  user?: IntrospectedAccountSchema;
  @ApiPropertyOptional({ type: TeamSchema, description: 'The team it acts in: the caller’s.' })
  team?: TeamSchema;
  @ApiPropertyOptional({
    enum: ['current', 'pinned'],
    description: "`pinned`: it acts in this team only; `current`: it follows its person's team.",
  })
  binding?: string;
  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'string', pattern: ABILITY_NAME.source },
    description: 'The abilities it holds that the deployment offers.',
  })
  abilities?: string[];
  @ApiPropertyOptional({
    type: IntrospectionRefusalSchema,
    nullable: true,
    description:
      'Null when the API would let it act, and do all that `required_abilities` names; else why not. The team’s refusal first, then an ability it lacks, then one the team does not allow.',
  })
  refusal?: IntrospectionRefusalSchema | null;
}
