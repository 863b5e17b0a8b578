/** The HTTP status of each stable error code. Codes are the contract; statuses follow them. */
export const STATUS_BY_CODE: Record<string, number> = {
  bad_request: 400,
  missing_token: 401,
  invalid_token: 401,
  token_revoked: 401,
  token_expired: 401,
  insufficient_scope: 403,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  email_taken: 409,
  already_member: 409,
  personal_team: 409,
  ambiguous_token_name: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  validation_failed: 422,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
};

/** The code for a status that arrived without one (from the router or the body parser). */
export const CODE_BY_STATUS: Record<number, string> = {
  400: 'bad_request',
  401: 'missing_token',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'validation_failed',
  429: 'rate_limited',
  503: 'service_unavailable',
};
