import type { Type } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ABILITY_NAME } from '../../../config/abilities.config.js';
import { API_VERSION } from '../../../common/http/envelope.js';

/** What the envelope's `timestamp` is: UTC with six fractional digits. */
const TIMESTAMP = {
  type: String,
  format: 'date-time',
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{6}Z$',
  description: 'When the answer was made: ISO 8601, UTC, microseconds.',
  example: '2026-11-22T10:15:30.123456Z',
};

const VERSION = {
  type: String,
  enum: [API_VERSION],
  description: 'The API version that answered.',
};

@ApiSchema({ name: 'UserProfile', description: 'The user who owns the token.' })
export class UserProfileSchema {
  @ApiProperty({ type: 'integer', minimum: 1, example: 1 })
  id!: number;
  @ApiProperty({ minLength: 1, example: 'Ada Lovelace' })
  name!: string;
  @ApiProperty({ description: 'As registered, in lower case.', example: 'ada@example.com' })
  email!: string;
}

@ApiSchema({
  name: 'AccountProfile',
  description: "The account that owns the token: a person, or a team's service account.",
})
export class AccountProfileSchema {
  @ApiProperty({ type: 'integer', minimum: 1, example: 1 })
  id!: number;
  @ApiProperty({ minLength: 1, example: 'Ada Lovelace' })
  name!: string;
  @ApiProperty({
    description:
      "As registered, in lower case. A service account's is under the reserved `.invalid` domain and names its team (`deploy-bot-7@team-3.service-accounts.invalid`): it receives no mail.",
    example: 'ada@example.com',
  })
  email!: string;
  @ApiProperty({
    enum: ['person', 'service_account'],
    description:
      "`person`: someone who signs in; `service_account`: an account owned by a team, whose tokens the team's owners and admins make and which signs in nowhere.",
    example: 'person',
  })
  type!: 'person' | 'service_account';
}

@ApiSchema({
  name: 'Team',
  description:
    "The team the token acts in: its owner's current team at the moment of the request, or the team it is pinned to.",
})
export class TeamSchema {
  @ApiProperty({ type: 'integer', minimum: 1, example: 1 })
  id!: number;
  @ApiProperty({ minLength: 1, example: "Ada's Team" })
  name!: string;
  @ApiProperty({ pattern: '^[a-z0-9]+(?:-[a-z0-9]+)*$', example: 'adas-team' })
  slug!: string;
}

@ApiSchema({ name: 'Ability', description: 'An ability of the catalog, with what it allows.' })
export class AbilitySchema {
  @ApiProperty({ pattern: ABILITY_NAME.source, example: 'team:read' })
  name!: string;
  @ApiProperty({
    minLength: 1,
    example: 'Read the team the token acts in (name and slug): GET /api/v1/team.',
  })
  description!: string;
}

@ApiSchema({
  name: 'Token',
  description: 'The presented token: what it may do and when it runs out. Never its value.',
})
export class TokenSchema {
  @ApiProperty({ type: 'integer', minimum: 1, example: 7 })
  id!: number;
  @ApiProperty({ minLength: 1, example: 'deploy script' })
  name!: string;
  @ApiProperty({
    type: 'array',
    items: { type: 'string', pattern: ABILITY_NAME.source },
    description: 'What it may do: the abilities it holds that this deployment offers.',
    example: ['user:read', 'team:read'],
  })
  abilities!: string[];
  @ApiProperty({
    type: 'array',
    items: { type: 'string', pattern: ABILITY_NAME.source },
    description:
      'Abilities it holds that this deployment no longer offers: they grant nothing, and the token is not refused for them.',
    example: [],
  })
  abilities_no_longer_offered!: string[];
  @ApiProperty({
    type: () => [AbilitySchema],
    description: 'Every ability this deployment offers, with what it allows.',
  })
  catalog!: AbilitySchema[];
  @ApiProperty({ type: String, format: 'date-time', example: '2026-11-01T09:00:00.000Z' })
  created_at!: string;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'Null when the token never expires.',
    example: '2026-12-01T09:00:00.000Z',
  })
  expires_at!: string | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'Recorded at most once a minute; null before the first use.',
    example: '2026-11-22T10:15:00.000Z',
  })
  last_used_at!: string | null;
  @ApiProperty({
    enum: ['current', 'pinned'],
    description:
      "`current`: the token acts in its person's current team, whichever that is at the moment of each request (the default). `pinned`: it acts in one team only, chosen when it was created.",
    example: 'current',
  })
  binding!: 'current' | 'pinned';
  @ApiProperty({
    type: TeamSchema,
    nullable: true,
    description:
      'The team the token acts in now, named only when the token has the `team:read` ability and the team does not refuse it (`team_refusal` is null). Null otherwise, when its person has no current team, or when it is pinned to a team its person is no longer in (or that was deleted).',
  })
  team!: TeamSchema | null;
  @ApiProperty({
    type: String,
    nullable: true,
    enum: ['team_access_lost', 'two_factor_required', 'token_lifetime_exceeds_policy', null],
    description:
      "Why the team refuses the token on every other endpoint (403 with this code), or null when it does not: the person lost access to the pinned team; the team requires two-factor sign-in, which the person has not turned on; or the token lives longer than the team's maximum.",
    example: null,
  })
  team_refusal!: string | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description:
      "Set when the value presented is the one the token had before it was regenerated, which works only during the grace period its person chose: until when it works (after that it is refused as `token_revoked`). Switch to the new value before then. Null for the token's current value.",
    example: null,
  })
  replaced_value_valid_until!: string | null;
}

/** The schema's name, as `@ApiSchema` gave it (the class's name otherwise). */
function schemaName(type: Type): string {
  const [options] = (Reflect.getMetadata('swagger/apiSchema', type) ?? []) as { name?: string }[];
  return options?.name ?? type.name;
}

const envelopes = new Map<Type, Type>();
const pages = new Map<Type, Type>();

/** The success envelope around one resource of `data`'s class: `<Name>Envelope`. */
export function envelopeOf(data: Type): Type {
  let envelope = envelopes.get(data);
  if (!envelope) {
    @ApiSchema({ name: `${schemaName(data)}Envelope` })
    class SuccessEnvelope {
      @ApiProperty({ type: Boolean, enum: [true] })
      success!: true;
      @ApiProperty({ type: data })
      data!: unknown;
      @ApiProperty(VERSION)
      version!: string;
      @ApiProperty(TIMESTAMP)
      timestamp!: string;
    }
    envelope = SuccessEnvelope;
    envelopes.set(data, envelope);
  }
  return envelope;
}

/** A page of a list of `data`'s class: `<Name>Page`, with the cursor of the next. */
export function pageEnvelopeOf(data: Type): Type {
  let page = pages.get(data);
  if (!page) {
    @ApiSchema({ name: `${schemaName(data)}Page` })
    class PageEnvelope {
      @ApiProperty({ type: Boolean, enum: [true] })
      success!: true;
      @ApiProperty({ type: data, isArray: true })
      data!: unknown[];
      @ApiProperty({
        type: String,
        nullable: true,
        pattern: '^[A-Za-z0-9_-]+$',
        description:
          'The cursor of the next page (send it as `cursor`, or follow the `Link` header); null on the last page.',
      })
      next!: string | null;
      @ApiProperty(VERSION)
      version!: string;
      @ApiProperty(TIMESTAMP)
      timestamp!: string;
    }
    page = PageEnvelope;
    pages.set(data, page);
  }
  return page;
}

@ApiSchema({ name: 'Error' })
export class ErrorBody {
  @ApiProperty({
    description: 'Stable and machine-readable: branch on this, not on the message.',
    example: 'invalid_token',
  })
  code!: string;
  @ApiProperty({ description: 'For people; may change.', example: 'The token is not valid.' })
  message!: string;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    description:
      'On `validation_failed` (and a conflict about one field): each bad field, by name, with what is wrong with it.',
    example: { email: 'Enter a valid email address.' },
  })
  fields?: Record<string, string>;
  @ApiPropertyOptional({
    description: 'On 5xx answers: the X-Request-Id to quote to support.',
    example: '0b797a9d-f1a0-4d3b-973f-fbb73d9a17a8',
  })
  requestId?: string;
}

@ApiSchema({ name: 'ErrorEnvelope' })
export class ErrorEnvelope {
  @ApiProperty({ type: Boolean, enum: [false] })
  success!: false;
  @ApiProperty({ type: ErrorBody })
  error!: ErrorBody;
  @ApiProperty(VERSION)
  version!: string;
  @ApiProperty(TIMESTAMP)
  timestamp!: string;
}
