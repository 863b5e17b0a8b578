/** The header that carries a request's id, on every answer (http/request-log.ts assigns it). */
export const REQUEST_ID_HEADER = 'X-Request-Id';
