import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { ABILITY_NAME } from '../../../config/abilities.config.js';

const ROLES = ['owner', 'admin', 'member'];
const DATE_TIME = { type: String, format: 'date-time', example: '2026-11-01T09:00:00.000Z' };
const NULLABLE_DATE_TIME = { ...DATE_TIME, nullable: true };

@ApiSchema({ name: 'TeamMembership', description: 'One of the person’s teams, with their role.' })
export class TeamMembershipSchema {
  @ApiProperty({ type: 'integer', minimum: 1, example: 4 })
  id!: number;
  @ApiProperty({ minLength: 1, example: 'Acme Corp' })
  name!: string;
  @ApiProperty({ pattern: '^[a-z0-9]+(?:-[a-z0-9]+)*$', example: 'acme-corp' })
  slug!: string;
  @ApiProperty({ description: 'The team made with the account, which has no one else.' })
  personal!: boolean;
  @ApiProperty({ enum: ROLES, example: 'admin' })
  role!: string;
}

@ApiSchema({ name: 'Member', description: 'A member of the team the token acts in.' })
export class MemberSchema {
  @ApiProperty({ type: 'integer', minimum: 1, description: "The member's user id.", example: 9 })
  id!: number;
  @ApiProperty({ minLength: 1, example: 'Grace Hopper' })
  name!: string;
  @ApiProperty({ example: 'grace@example.com' })
  email!: string;
  @ApiProperty({ enum: ROLES, example: 'member' })
  role!: string;
  @ApiProperty({ ...DATE_TIME, description: 'When they joined the team.' })
  joined_at!: string;
}

@ApiSchema({
  name: 'Invitation',
  description: 'An invitation to the team, waiting for its answer.',
})
export class InvitationSchema {
  @ApiProperty({ type: 'integer', minimum: 1, example: 12 })
  id!: number;
  @ApiProperty({ description: 'The invited address, in lower case.', example: 'ann@example.com' })
  email!: string;
  @ApiProperty({ enum: ['member', 'admin'], example: 'member' })
  role!: string;
  @ApiProperty({ enum: ['pending'], description: 'Waiting for an answer.' })
  status!: string;
  @ApiProperty({ ...DATE_TIME, description: 'When its link stops working.' })
  expires_at!: string;
  @ApiProperty(DATE_TIME)
  created_at!: string;
}

@ApiSchema({
  name: 'TokenPerson',
  description:
    "Whose token it is: a member and their role in the team, or the team's service account.",
})
export class TokenPersonSchema {
  @ApiProperty({ type: 'integer', minimum: 1, example: 9 })
  id!: number;
  @ApiProperty({ minLength: 1, example: 'Grace Hopper' })
  name!: string;
  @ApiProperty({
    description: "A service account's is under `.invalid` and receives no mail.",
    example: 'grace@example.com',
  })
  email!: string;
  @ApiProperty({
    type: String,
    enum: [...ROLES, null],
    nullable: true,
    description: 'Null for a service account, which is never a member.',
    example: 'member',
  })
  role!: string | null;
  @ApiProperty({ enum: ['person', 'service_account'], example: 'person' })
  type!: 'person' | 'service_account';
}

@ApiSchema({
  name: 'TeamToken',
  description:
    'A token that can act in the team: names and metadata only, never its value or its hash.',
})
export class TeamTokenSchema {
  @ApiProperty({ type: 'integer', minimum: 1, example: 31 })
  id!: number;
  @ApiProperty({ minLength: 1, example: 'deploy script' })
  name!: string;
  @ApiProperty({
    pattern: '^tsr_…[A-Za-z0-9]{4}$',
    description: 'The prefix and the last four characters, as the pages show them.',
    example: 'tsr_…a1B2',
  })
  hint!: string;
  @ApiProperty({
    type: 'array',
    items: { type: 'string', pattern: ABILITY_NAME.source },
    example: ['team:read'],
  })
  abilities!: string[];
  @ApiProperty(DATE_TIME)
  created_at!: string;
  @ApiProperty({ ...NULLABLE_DATE_TIME, description: 'Null when it never expires.' })
  expires_at!: string | null;
  @ApiProperty({ ...NULLABLE_DATE_TIME, description: 'Null before its first use.' })
  last_used_at!: string | null;
  @ApiProperty({ type: String, nullable: true, example: '203.0.113.9' })
  last_address!: string | null;
  @ApiProperty({ enum: ['current', 'pinned'], example: 'current' })
  binding!: string;
  @ApiProperty({ type: TokenPersonSchema })
  person!: TokenPersonSchema;
  @ApiProperty({
    type: String,
    nullable: true,
    enum: [
      'account_disabled',
      'team_access_lost',
      'two_factor_required',
      'token_lifetime_exceeds_policy',
      null,
    ],
    description:
      "Why the API refuses it here, or null: `account_disabled` (401: an operator disabled its account, until enabled), else the team's own refusal (the 403 code it gets).",
    example: null,
  })
  team_refusal!: string | null;
}

@ApiSchema({ name: 'AuditActor', description: 'Who did it.' })
export class AuditActorSchema {
  @ApiProperty({ enum: ['user', 'token', 'operator', 'system', 'anonymous'], example: 'token' })
  kind!: string;
  @ApiProperty({ type: 'integer', nullable: true, example: 9 })
  user_id!: number | null;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'The token it was done with.',
    example: 31,
  })
  token_id!: number | null;
}

@ApiSchema({ name: 'AuditTarget', description: 'What it was done to.' })
export class AuditTargetSchema {
  @ApiProperty({ example: 'user' })
  type!: string;
  @ApiProperty({ type: 'integer', nullable: true, example: 9 })
  id!: number | null;
}

@ApiSchema({ name: 'AuditEvent', description: "An event of the team's audit log." })
export class AuditEventSchema {
  @ApiProperty({ type: 'integer', minimum: 1, example: 812 })
  id!: number;
  @ApiProperty(DATE_TIME)
  occurred_at!: string;
  @ApiProperty({
    pattern: '^[a-z0-9_-]+\\.[a-z0-9_.-]+$',
    description: 'A stable name, `<kind>.<what>`: `team.member_invited`, `token.revoked`, …',
    example: 'team.member_invited',
  })
  event!: string;
  @ApiProperty({ type: AuditActorSchema })
  actor!: AuditActorSchema;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'The account it concerns.',
    example: 9,
  })
  user_id!: number | null;
  @ApiProperty({ type: AuditTargetSchema, nullable: true })
  target!: AuditTargetSchema | null;
  @ApiProperty({
    type: 'object',
    nullable: true,
    additionalProperties: true,
    description: 'A few named facts (names, roles, a reason); never a secret.',
    example: { team: 'Acme Corp', email: 'ann@example.com', role: 'member' },
  })
  detail!: Record<string, unknown> | null;
  @ApiProperty({ type: String, nullable: true, example: '203.0.113.9' })
  ip!: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'curl/8.5.0' })
  user_agent!: string | null;
}
