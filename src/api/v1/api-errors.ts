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
} as const satisfies Record<string, { status: number; description: string }>;

export type ApiErrorCode = keyof typeof API_ERRORS;
