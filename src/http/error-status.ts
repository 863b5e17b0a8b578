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
