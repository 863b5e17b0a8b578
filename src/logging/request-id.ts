import type { NextFunction, Request, Response } from 'express';
import { randomUUID } from 'node:crypto';

import { REQUEST_ID_HEADER } from '../common/http/request-id-header.js';

export { REQUEST_ID_HEADER };

/** What a client or a proxy may pass on: a UUID, a ULID, a trace id; nothing that could forge a log line. */
export const WELL_FORMED_REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/**
 * Every request gets an id: the client's X-Request-Id when it is well formed, a new UUID
 * otherwise. It is on every response and in every log line of the request, so one id leads
 * from a client's report to the log.
 */
export function assignRequestId(req: Request, res: Response, next: NextFunction): void {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && WELL_FORMED_REQUEST_ID.test(given) ? given : randomUUID();
  req.id = id;
  res.setHeader(REQUEST_ID_HEADER, id);
  next();
}
