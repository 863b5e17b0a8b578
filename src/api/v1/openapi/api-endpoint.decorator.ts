import { applyDecorators, type Type } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiResponse,
  getSchemaPath,
  type HeadersObject,
} from '@nestjs/swagger';
import { BearerAuth } from '../../../common/auth-policy.decorator.js';
import { REQUEST_ID_HEADER, WELL_FORMED_REQUEST_ID } from '../../../logging/request-log.js';
import type { DomainError } from '../../../common/errors/domain.error.js';
import { GENERIC_MESSAGES } from '../../../common/filters/all-exceptions.filter.js';
import { API_VERSION } from '../../../common/http/envelope.js';
import { RateLimitedError } from '../../../rate-limit/rate-limit.errors.js';
import { TeamNotFoundError } from '../../../teams/teams.errors.js';
import { InsufficientScopeError } from '../../../auth/auth.errors.js';
import { AuthenticationError, TeamRefusalError } from '../../../tokens/tokens.errors.js';
import type { Ability } from '../../../tokens/abilities.js';
import { ErrorEnvelope } from './schemas.js';

export const BEARER_SCHEME = 'bearer';

/** On every answer of the API. */
export const ALWAYS: HeadersObject = {
  [REQUEST_ID_HEADER]: {
    description:
      "The request's id: the client's own X-Request-Id when it is well formed (letters, digits and `._:-`, up to 128), a new UUID otherwise. It names the request's log line.",
    required: true,
    schema: { type: 'string', pattern: WELL_FORMED_REQUEST_ID.source },
  },
  'Cache-Control': {
    description: 'Answers are per token: never stored by a browser or a proxy.',
    required: true,
    schema: { type: 'string', enum: ['no-store'] },
  },
};

/** Where the client stands in its current window; sent while rate limiting is on (the default). */
const RATE_LIMIT: HeadersObject = {
  'RateLimit-Limit': {
    description:
      'Requests allowed in the window: per token once authenticated, per client IP for requests with a missing or bad token.',
    schema: { type: 'string', pattern: '^\\d+$' },
  },
  'RateLimit-Remaining': {
    description: 'Requests left in the current window.',
    schema: { type: 'string', pattern: '^\\d+$' },
  },
  'RateLimit-Reset': {
    description: 'Seconds until the window starts afresh.',
    schema: { type: 'string', pattern: '^\\d+$' },
  },
};

const CHALLENGE: HeadersObject = {
  'WWW-Authenticate': {
    description: 'The RFC 6750 challenge, naming the error.',
    required: true,
    schema: { type: 'string', pattern: '^Bearer realm="tessera"' },
  },
};

const RETRY_AFTER: HeadersObject = {
  'Retry-After': {
    description: 'Seconds to wait before trying again.',
    required: true,
    schema: { type: 'string', pattern: '^\\d+$' },
  },
};

/** An error answer: the error envelope, with the codes this status can carry. */
function errorResponse(
  status: number,
  codes: string[],
  description: string,
  example: { code: string; message: string },
  headers: HeadersObject = {},
): MethodDecorator {
  const properties: Record<string, object> = { code: { type: 'string', enum: codes } };
  const error: Record<string, unknown> = { properties };
  const shown: Record<string, string> = { ...example };
  // Support finds a server-side failure by its request id.
  if (status >= 500) {
    properties.requestId = { type: 'string', description: 'Always there on a 5xx answer.' };
    error.required = ['requestId'];
    shown.requestId = '0b797a9d-f1a0-4d3b-973f-fbb73d9a17a8';
  }
  return ApiResponse({
    status,
    description,
    headers: { ...ALWAYS, ...RATE_LIMIT, ...headers },
    schema: {
      allOf: [
        { $ref: getSchemaPath(ErrorEnvelope) },
        { type: 'object', properties: { error: { type: 'object', ...error } } },
      ],
      example: {
        success: false,
        error: shown,
        version: API_VERSION,
        timestamp: '2026-11-22T10:15:30.123456Z',
      },
    },
  });
}

function asExample(error: DomainError): { code: string; message: string } {
  return { code: error.code, message: error.message };
}

/** The 403 an endpoint can answer: the ability it needs, and its team's refusals of the token. */
function forbidden(ability: Ability | undefined, actsInTeam: boolean): MethodDecorator[] {
  const codes = [
    ...(ability ? ['insufficient_scope'] : []),
    ...(actsInTeam ? TEAM_REFUSAL_CODES : []),
  ];
  if (codes.length === 0) return [];
  const reasons = [
    ...(ability ? [`the token lacks the \`${ability}\` ability`] : []),
    ...(actsInTeam
      ? [
          "the team the token acts in refuses it: it is pinned to a team its person is no longer in (`team_access_lost`), the team requires two-factor sign-in and the person has not turned it on (`two_factor_required`), or the token lives longer than the team's maximum (`token_lifetime_exceeds_policy`)",
        ]
      : []),
  ];
  const example = ability
    ? new InsufficientScopeError(ability)
    : new TeamRefusalError('two_factor_required');
  const text = reasons.join('; or ');
  return [
    errorResponse(
      403,
      codes,
      `${text.charAt(0).toUpperCase()}${text.slice(1)}.`,
      asExample(example),
      CHALLENGE,
    ),
  ];
}

const TEAM_REFUSAL_CODES = [
  'team_access_lost',
  'two_factor_required',
  'token_lifetime_exceeds_policy',
];

export interface ApiEndpointOptions {
  /** The ability the token needs; none for an endpoint any valid token may call. */
  ability?: Ability;
  summary: string;
  description: string;
  /** The success envelope's class. */
  envelope: Type;
  /** When the endpoint can answer 404, why. */
  notFound?: string;
  /**
   * Whether it acts in the token's team, and is refused when that team refuses the token
   * (true unless said otherwise).
   */
  actsInTeam?: boolean;
}

/**
 * One API endpoint: its bearer policy for the guard and its whole description for the OpenAPI
 * document (the success envelope, every error it can answer, the headers), kept in one place.
 */
export function ApiEndpoint(options: ApiEndpointOptions): MethodDecorator {
  return applyDecorators(
    BearerAuth(options.ability, options.actsInTeam !== false),
    ApiOperation({ summary: options.summary, description: options.description }),
    ApiBearerAuth(BEARER_SCHEME),
    ApiExtraModels(ErrorEnvelope),
    ApiOkResponse({
      type: options.envelope,
      description: 'The resource, in the success envelope.',
      headers: { ...ALWAYS, ...RATE_LIMIT },
    }),
    errorResponse(
      401,
      ['missing_token', 'invalid_token', 'token_revoked', 'token_expired'],
      'No token, or one that is malformed, unknown, revoked (a value that regenerating the token replaced counts as revoked once its grace period is over) or expired.',
      asExample(new AuthenticationError('invalid_token')),
      CHALLENGE,
    ),
    ...forbidden(options.ability, options.actsInTeam !== false),
    ...(options.notFound
      ? [errorResponse(404, ['not_found'], options.notFound, asExample(new TeamNotFoundError()))]
      : []),
    errorResponse(
      429,
      ['rate_limited'],
      "Too many requests: the token's budget, or the client's budget of failed attempts, is used up.",
      asExample(new RateLimitedError(42)),
      RETRY_AFTER,
    ),
    errorResponse(
      500,
      ['internal_error'],
      'Something unexpected failed; nothing internal is revealed.',
      { code: 'internal_error', message: GENERIC_MESSAGES[500] },
    ),
    errorResponse(
      503,
      ['service_unavailable'],
      'The database cannot be reached or gave no answer in time; try again after Retry-After seconds.',
      { code: 'service_unavailable', message: GENERIC_MESSAGES[503] },
      RETRY_AFTER,
    ),
  );
}
