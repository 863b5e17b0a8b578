import {
  applyDecorators,
  HttpCode,
  RequestMapping,
  RequestMethod,
  SetMetadata,
  UseInterceptors,
  type Type,
} from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiConsumes,
  ApiExtraModels,
  ApiHeader,
  ApiNoContentResponse,
  ApiOperation,
  ApiResponse,
  getSchemaPath,
  type HeadersObject,
} from '@nestjs/swagger';
import { BearerAuth } from '../../../common/auth-policy.decorator.js';
import { REQUEST_ID_HEADER, WELL_FORMED_REQUEST_ID } from '../../../http/request-log.js';
import { GENERIC_MESSAGES } from '../../../http/all-exceptions.filter.js';
import { API_VERSION } from '../../../common/http/envelope.js';
import { RateLimitedError } from '../../../rate-limit/rate-limit.errors.js';
import { AuthenticationError } from '../../../tokens/tokens.errors.js';
import type { Ability } from '../../../tokens/abilities.js';
import { API_ERRORS, type ApiErrorCode } from '../api-errors.js';
import { API_AUDIT_EVENT, ApiAuditTrail } from '../conventions/api-audit.interceptor.js';
import { NextPageLink } from '../conventions/pagination.js';
import { RouteLimit, type RouteLimitName } from '../../../http/route-limit.js';
import {
  IdempotencyInterceptor,
  IDEMPOTENCY_HEADER,
  IDEMPOTENCY_KEY,
} from '../idempotency/idempotency.interceptor.js';
import { ErrorEnvelope, envelopeOf, pageEnvelopeOf } from './schemas.js';

export const BEARER_SCHEME = 'bearer';

/** On every answer of the API. */
export const ALWAYS: HeadersObject = {
  [REQUEST_ID_HEADER]: {
    description:
      "The request's id: the client's own X-Request-Id when it is well formed (letters, digits and `._:-`, up to 128, beginning with a letter or digit), a new UUID otherwise. It names the request's log line.",
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

/** On the answer a POST's Idempotency-Key gets again (any answer stored for it, not only this one). */
const REPLAYED: HeadersObject = {
  'Idempotent-Replayed': {
    description:
      'Sent, as `true`, on an answer given again for an `Idempotency-Key` used before: nothing was done this time.',
    schema: { type: 'string', enum: ['true'] },
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

/** Why a team refuses a token, for every endpoint that acts in the token's team. */
const TEAM_REFUSALS: Record<string, string> = {
  team_access_lost: 'the token is pinned to a team its person is no longer in',
  two_factor_required:
    "the team requires two-factor sign-in and the token's person has not turned it on",
  token_lifetime_exceeds_policy: "the token lives longer than the team's maximum",
};

/** What an endpoint may answer besides its success: each status with its codes and reasons. */
function refusals(options: ApiEndpointOptions): Map<number, Map<string, string>> {
  const byStatus = new Map<number, Map<string, string>>();
  const add = (status: number, code: string, reason: string) => {
    if (!byStatus.has(status)) byStatus.set(status, new Map());
    byStatus.get(status)!.set(code, reason);
  };
  const actsInTeam = options.actsInTeam !== false;
  if (options.ability) {
    add(403, 'insufficient_scope', `the token lacks the \`${options.ability}\` ability`);
    if (actsInTeam) {
      add(
        403,
        'ability_not_allowed_by_team',
        `the team's policy does not allow tokens the \`${options.ability}\` ability`,
      );
    }
  }
  if (actsInTeam) {
    for (const [code, reason] of Object.entries(TEAM_REFUSALS)) add(403, code, reason);
  }
  const input = options.body !== undefined || options.query !== undefined;
  const codes = new Set<ApiErrorCode>(options.errors ?? []);
  if (input) codes.add('validation_failed');
  if (options.body)
    for (const code of ['bad_request', 'payload_too_large', 'unsupported_media_type'] as const)
      codes.add(code);
  if (options.method === 'POST' && !options.protocol) {
    codes.add('idempotency_key_in_use');
    codes.add('idempotency_key_reused');
  }
  if (options.method === 'POST') codes.add('validation_failed');
  for (const code of codes) add(API_ERRORS[code].status, code, API_ERRORS[code].description);
  return byStatus;
}

/** An error answer for every status the endpoint may refuse with, beyond authentication. */
function refusalResponses(options: ApiEndpointOptions): MethodDecorator[] {
  return [...refusals(options)].map(([status, codes]) => {
    const [first, ...more] = [...codes.values()].map((reason) => reason.replace(/\.$/, ''));
    const text = [first, ...more].join('; or ');
    const code = [...codes.keys()][0];
    const sentence = (words: string) => `${words.charAt(0).toUpperCase()}${words.slice(1)}.`;
    return errorResponse(
      status,
      [...codes.keys()],
      sentence(text),
      { code, message: sentence(first) },
      // A token's refusals carry a challenge; the conflict of a key under way, when to retry.
      status === 403 ? CHALLENGE_OPTIONAL : status === 409 ? RETRY_AFTER_OPTIONAL : {},
    );
  });
}

const CHALLENGE_OPTIONAL: HeadersObject = {
  'WWW-Authenticate': { ...CHALLENGE['WWW-Authenticate'], required: false },
};

const RETRY_AFTER_OPTIONAL: HeadersObject = {
  'Retry-After': { ...RETRY_AFTER['Retry-After'], required: false },
};

const ETAG: HeadersObject = {
  ETag: {
    description:
      'A weak tag of the answer: sent back in `If-None-Match`, it makes the same request answer 304 while nothing changed.',
    required: true,
    schema: { type: 'string', pattern: '^W/".+"$' },
  },
};

const LINK: HeadersObject = {
  Link: {
    description:
      'Where the next page is (RFC 8288, `rel="next"`), when there is one: the same request with the `next` cursor.',
    schema: { type: 'string', pattern: '^<.+>; rel="next"$' },
  },
};

export type ApiMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ApiEndpointOptions {
  /** The method and the path under its controller's (`api/v1/…`). */
  method: ApiMethod;
  path?: string;
  /** The operation's name in the OpenAPI document and the generated client: `listMembers`. */
  operationId: string;
  /** The ability the token needs; none for an endpoint any valid token may call. */
  ability?: Ability;
  summary: string;
  description: string;
  /**
   * The class of the answer's `data`; `[Class]` for a list, answered a page at a time (cursor
   * pagination: `limit`, `cursor`, `next`, `Link`); left out, the answer is 204 without a body.
   */
  data?: Type | [Type];
  /** The JSON body's class (validated by `@JsonBody()`): 413, 415 and 422 come with it. */
  body?: Type;
  /** The query string's class (validated by `@JsonQuery()`); lists have `PageQuery`'s. */
  query?: Type;
  /** What else it may refuse with, from the API's table of codes (api-errors.ts). */
  errors?: ApiErrorCode[];
  /**
   * Whether it acts in the token's team, and is refused when that team refuses the token or
   * does not allow its ability (true unless said otherwise).
   */
  actsInTeam?: boolean;
  /** An event to record in the team's audit log each time it succeeds: `invoice.created`. */
  audit?: `${string}.${string}`;
  /**
   * A named limit it counts on (`route-limit.ts`), shared with the pages that count on it:
   * counted once the token may act, and not for the replay of an answered Idempotency-Key.
   */
  limit?: RouteLimitName;
  /**
   * The one exception to the API's conventions, for an endpoint that follows a standard whose
   * clients expect its own shapes (docs/api.md): `rfc7662`, token introspection, takes its body
   * as a form (`application/x-www-form-urlencoded`) or JSON, answers 200 with the standard's
   * JSON object itself (no envelope), counts on the token's budget of introspections, and,
   * being safe to repeat, takes no Idempotency-Key. Its controller holds no other endpoint.
   */
  protocol?: 'rfc7662';
}

/** Marks an API endpoint's handler: its module's routes are authenticated and described. */
export const API_ENDPOINT = 'tessera:api-endpoint';

/** What `API_ENDPOINT` holds on a handler. */
export interface ApiEndpointMeta {
  operationId: string;
  protocol?: ApiEndpointOptions['protocol'];
}

const STATUS_OF: Record<ApiMethod, number> = {
  GET: 200,
  POST: 201,
  PUT: 200,
  PATCH: 200,
  DELETE: 204,
};

/** The success answer: the resource in its envelope, a page of a list, or 204 and no body. */
function successResponse(options: ApiEndpointOptions, status: number): MethodDecorator[] {
  const headers = {
    ...ALWAYS,
    ...RATE_LIMIT,
    ...(options.method === 'GET' ? ETAG : {}),
    ...(options.method === 'POST' && !options.protocol ? REPLAYED : {}),
  };
  if (options.protocol) {
    const data = options.data as Type;
    return [
      ApiExtraModels(data),
      ApiResponse({
        status,
        description: "The standard's own JSON object, without the API's envelope.",
        headers,
        schema: { $ref: getSchemaPath(data) },
      }),
    ];
  }
  if (options.data === undefined) {
    return [ApiNoContentResponse({ description: 'Done; no body.', headers })];
  }
  const list = Array.isArray(options.data);
  const envelope = list
    ? pageEnvelopeOf((options.data as [Type])[0])
    : envelopeOf(options.data as Type);
  return [
    ApiExtraModels(envelope),
    ApiResponse({
      status,
      description: list
        ? 'A page of the list, in the page envelope: `next` is the cursor of the page after it, null on the last.'
        : 'The resource, in the success envelope.',
      headers: list ? { ...headers, ...LINK } : headers,
      schema: { $ref: getSchemaPath(envelope) },
    }),
  ];
}

/** What every endpoint may answer whatever it does: no token, no budget left, our failures. */
const EVERY_ENDPOINT: MethodDecorator[] = [
  errorResponse(
    401,
    ['missing_token', 'invalid_token', 'token_revoked', 'token_expired', 'account_disabled'],
    'No token, or one that is malformed, unknown, revoked (a value that regenerating the token replaced counts as revoked once its grace period is over) or expired, or whose account an operator disabled.',
    { code: 'invalid_token', message: new AuthenticationError('invalid_token').message },
    CHALLENGE,
  ),
  errorResponse(
    429,
    ['rate_limited'],
    "Too many requests: the token's budget, or the client's budget of failed attempts, is used up.",
    { code: 'rate_limited', message: new RateLimitedError(42).message },
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
    'The database cannot be reached, gave no answer in time, or its cluster node is not serving, or the same rows kept being changed by others at the same moment; try again after Retry-After seconds.',
    { code: 'service_unavailable', message: GENERIC_MESSAGES[503] },
    RETRY_AFTER,
  ),
];

/** The conventions of docs/api.md that depend on the method: ETag, Idempotency-Key, pages. */
function conventions(options: ApiEndpointOptions): MethodDecorator[] {
  const applied: MethodDecorator[] = [];
  if (options.method === 'GET') {
    applied.push(
      ApiHeader({
        name: 'If-None-Match',
        required: false,
        description:
          'The ETag of an earlier answer: 304 without a body while it is still the same.',
      }),
      ApiResponse({
        status: 304,
        description: 'Not modified: the answer is the one whose ETag was sent in If-None-Match.',
        headers: { ...ALWAYS, ...RATE_LIMIT, ...ETAG },
      }),
    );
  }
  if (options.protocol) {
    applied.push(ApiConsumes('application/x-www-form-urlencoded', 'application/json'));
  } else if (options.method === 'POST') {
    applied.push(
      ApiHeader({
        name: IDEMPOTENCY_HEADER,
        required: false,
        description:
          'Any string of 1 to 255 printable ASCII characters, spaces included (a UUID, say), that names this request: sent again with the same body within 24 hours, it gets the first answer again, with `Idempotent-Replayed: true`, and nothing is done twice. Any other key is refused (422, naming `Idempotency-Key`).',
        schema: { type: 'string', minLength: 1, maxLength: 255, pattern: IDEMPOTENCY_KEY.source },
      }),
      UseInterceptors(IdempotencyInterceptor),
    );
  }
  if (Array.isArray(options.data)) applied.push(UseInterceptors(NextPageLink));
  if (options.audit) {
    applied.push(SetMetadata(API_AUDIT_EVENT, options.audit), UseInterceptors(ApiAuditTrail));
  }
  return applied;
}

/**
 * One API endpoint, in one decorator: its route, its bearer policy (the ability the guard
 * checks, the team's refusals), the API's conventions (a POST's Idempotency-Key, a list's
 * pages and Link, an audit event) and its whole description for the OpenAPI document (the
 * success envelope, every error it can answer with its codes, the headers). A controller
 * under `api/v1/` anywhere in the app gets authentication, rate limits and usage too: the API
 * module mounts its middleware on every controller with such a handler (docs/extending.md).
 */
export function ApiEndpoint(options: ApiEndpointOptions): MethodDecorator {
  const status = options.protocol
    ? 200
    : options.data === undefined
      ? 204
      : STATUS_OF[options.method];
  const meta: ApiEndpointMeta = { operationId: options.operationId, protocol: options.protocol };
  return applyDecorators(
    RequestMapping({ path: options.path ?? '/', method: RequestMethod[options.method] }),
    HttpCode(status),
    SetMetadata(API_ENDPOINT, meta),
    BearerAuth(options.ability, options.actsInTeam !== false),
    ApiOperation({
      operationId: options.operationId,
      summary: options.summary,
      description: options.description,
    }),
    ApiBearerAuth(BEARER_SCHEME),
    ApiExtraModels(ErrorEnvelope),
    ...successResponse(options, status),
    ...EVERY_ENDPOINT,
    ...refusalResponses(options),
    ...conventions(options),
    // Last: its interceptor runs inside the Idempotency-Key's, which answers a replay itself.
    ...(options.limit ? [RouteLimit(options.limit)] : []),
  );
}
