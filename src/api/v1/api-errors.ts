import type { DomainError, DomainErrorCode } from '../../common/errors/domain.error.js';
import {
  answerIn,
  type AnswerTable,
  type ApiErrorAnswers,
  type ErrorStatus,
} from '../../http/all-exceptions.filter.js';
import { AbilityNotAllowedByTeamError, InsufficientScopeError } from '../../auth/auth.errors.js';
import { AuthenticationError } from '../../tokens/tokens.errors.js';

/** The realm of the API's bearer challenges. */
export const BEARER_REALM = 'tessera';

const REALM = `Bearer realm="${BEARER_REALM}"`;

/** What the API answers a domain error with: its status, and the WWW-Authenticate challenge. */
interface ApiAnswer {
  status: ErrorStatus;
  challenge?: string;
}

/** RFC 6750: a bearer token refused; no error attribute when none was sent at all. */
const BEARER_REFUSED: ApiAnswer = { status: 401, challenge: `${REALM}, error="invalid_token"` };

/** A good token that the team it acts in refuses: answered as a missing ability is. */
const TEAM_REFUSAL = (error: DomainError): ApiAnswer => ({
  status: 403,
  challenge: `${REALM}, error="insufficient_scope", error_description="${error.code}"`,
});

/** A 401 names how to authenticate (RFC 9110): here, the scanner's signature header. */
const REPORT_UNSIGNED: ApiAnswer = {
  status: 401,
  challenge: 'GitHub-Public-Key-Signature realm="tessera"',
};

/**
 * The one table of the API's answers to domain errors (the envelope carries the code and the
 * message as they are). Two codes are said by a bearer token's refusal and by a service alike:
 * a refused bearer token answers 401 with its challenge.
 */
const API_ANSWERS: AnswerTable<ApiAnswer> = {
  not_found: { status: 404 },
  forbidden: { status: 403 },
  validation_failed: { status: 422 },
  still_referenced: { status: 422 },
  rate_limited: { status: 429 },
  service_unavailable: { status: 503 },
  server_busy: { status: 503 },
  bad_request: { status: 400 },
  payload_too_large: { status: 413 },
  unsupported_media_type: { status: 415 },
  idempotency_key_in_use: { status: 409 },
  idempotency_key_reused: { status: 422 },
  missing_token: { status: 401, challenge: REALM },
  invalid_token: BEARER_REFUSED,
  token_revoked: (error) =>
    error instanceof AuthenticationError ? BEARER_REFUSED : { status: 409 },
  token_expired: BEARER_REFUSED,
  token_changed: { status: 409 },
  recovery_codes_changed: { status: 409 },
  account_disabled: (error) =>
    error instanceof AuthenticationError ? BEARER_REFUSED : { status: 403 },
  insufficient_scope: (error) => ({
    status: 403,
    challenge: `${REALM}, error="insufficient_scope", scope="${(error as InsufficientScopeError).scope}"`,
  }),
  ability_not_allowed_by_team: (error) => ({
    status: 403,
    challenge: `${REALM}, error="insufficient_scope", scope="${(error as AbilityNotAllowedByTeamError).ability}", error_description="ability_not_allowed_by_team"`,
  }),
  team_access_lost: TEAM_REFUSAL,
  two_factor_required: TEAM_REFUSAL,
  token_lifetime_exceeds_policy: TEAM_REFUSAL,
  ambiguous_token_name: { status: 409 },
  signature_required: REPORT_UNSIGNED,
  unknown_key: REPORT_UNSIGNED,
  invalid_signature: REPORT_UNSIGNED,
  malformed_report: { status: 400 },
  invalid_credentials: { status: 422 },
  sign_in_required: { status: 401 },
  sign_in_expired: { status: 401 },
  already_signed_in: { status: 409 },
  cross_site_request: { status: 403 },
  password_confirmation_required: { status: 403 },
  email_taken: { status: 409 },
  email_not_verified: { status: 403 },
  owns_shared_teams: { status: 409 },
  account_state_unchanged: { status: 409 },
  no_second_factor: { status: 409 },
  link_expired: { status: 410 },
  link_used: { status: 410 },
  link_unknown: { status: 404 },
  link_withdrawn: { status: 410 },
  two_factor_enabled: { status: 409 },
  two_factor_not_enabled: { status: 409 },
  two_factor_setup_expired: { status: 409 },
  too_many_passkeys: { status: 409 },
  passkey_exists: { status: 409 },
  owner_role: { status: 409 },
  already_member: { status: 409 },
  personal_team: { status: 409 },
  owner_cannot_leave: { status: 409 },
  already_invited: { status: 409 },
  wrong_invitee: { status: 403 },
  service_account_limit: { status: 409 },
  service_account_name_taken: { status: 409 },
  webhook_endpoint_limit: { status: 409 },
};

/** The API edge's answers, for the exception filter (and the middleware that answers early). */
export const apiErrorAnswers: ApiErrorAnswers = {
  statusOf: (error) => answerIn(API_ANSWERS, error).status,
  challengeOf: (error) => answerIn(API_ANSWERS, error).challenge,
};

/**
 * The API's error codes beyond authentication and the rate limit, each with its status and what
 * it means to a client: the one table the OpenAPI description of every endpoint is made from
 * (`@ApiEndpoint({ errors })` takes only these keys, so an endpoint cannot document a code
 * nobody mapped), and that `api-errors.spec.ts` holds against the domain errors that answer
 * with them.
 */
export const API_ERRORS = {
  bad_request: {
    status: 400,
    description: 'The body is not valid JSON, or the request could not be read at all.',
  },
  forbidden: {
    status: 403,
    description:
      "The token's person is in the team but may not do this: only the team's owner or an admin may (the owner alone, for an admin's role or removal).",
  },
  not_found: {
    status: 404,
    description:
      'Nothing with this id in the team the token acts in (another team\'s ids are "not found" too), or the token acts in no team.',
  },
  already_member: { status: 409, description: 'That address belongs to a member of the team.' },
  already_invited: {
    status: 409,
    description: 'That address has an invitation waiting already.',
  },
  personal_team: {
    status: 409,
    description: 'A personal team has no other members and invites no one.',
  },
  owner_role: {
    status: 409,
    description: "The owner's role changes only when the owner transfers the team.",
  },
  owner_cannot_leave: { status: 409, description: 'The owner cannot be removed from the team.' },
  idempotency_key_in_use: {
    status: 409,
    description:
      'A request with the same Idempotency-Key is still under way: try again after Retry-After seconds to get its answer.',
  },
  link_used: {
    status: 410,
    description: 'The invitation was answered (or withdrawn) meanwhile.',
  },
  payload_too_large: { status: 413, description: 'The body is larger than 16 KB.' },
  unsupported_media_type: {
    status: 415,
    description: 'The body is not `application/json`.',
  },
  validation_failed: {
    status: 422,
    description:
      'A field of the body or the query string is missing or wrong: `error.fields` names each one with what is wrong with it.',
  },
  idempotency_key_reused: {
    status: 422,
    description:
      'This Idempotency-Key was used in the last 24 hours for another request (another method, path or body); nothing was done.',
  },
} as const satisfies Partial<Record<DomainErrorCode, { status: ErrorStatus; description: string }>>;

export type ApiErrorCode = keyof typeof API_ERRORS;
