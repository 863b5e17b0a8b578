import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { EVERY_PATH } from '../common/http/every-path.js';
import { REQUEST_ID_HEADER } from '../common/http/request-id-header.js';
import { loggablePath, type RequestLine, type ResponseWatcher } from '../logging/access-log.js';
import { actingUserOf } from './request-state.js';

export { REQUEST_ID_HEADER };

/**
 * Every request from its first step to its log line: its id, its timer, and the line that the
 * access log and the metrics are told of when the response closes.
 */

/** What a client or a proxy may pass on: a UUID, a ULID, a trace id; nothing that could forge a log line. */
export const WELL_FORMED_REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/**
 * Every request gets an id: the client's X-Request-Id when it is well formed, a new UUID
 * otherwise. It is on every response and in every log line of the request, so one id leads
 * from a client's report to the log.
 */
function assignRequestId(req: Request, res: Response, next: NextFunction): void {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && WELL_FORMED_REQUEST_ID.test(given) ? given : randomUUID();
  req.id = id;
  res.setHeader(REQUEST_ID_HEADER, id);
  next();
}

/**
 * The first middleware of every request: gives it its id and, when anyone watches, times it and
 * tells each watcher once the response has closed. One layer and one listener however many
 * watchers there are: each layer and listener is paid on every request.
 */
export function observeRequests(watchers: ResponseWatcher[]): RequestHandler {
  if (watchers.length === 0) return assignRequestId;
  return (req: Request, res: Response, next: NextFunction): void => {
    const start = performance.now();
    res.on('close', () => {
      const line = requestLine(req, res, performance.now() - start);
      const aborted = !res.writableFinished;
      for (const watch of watchers) watch(line, aborted);
    });
    assignRequestId(req, res, next);
  };
}

/**
 * The pattern of the route that answered (`/teams/:id`), or whose middleware did (a refused
 * token); for a static file, the folder it was served from (`/css`); null when nothing matched.
 */
export function routeOf(req: Request): string | null {
  const route = (req.route as { path?: string } | undefined)?.path;
  if (route === undefined || route === EVERY_PATH) return req.baseUrl || null;
  // A controller's root route as Nest registers its middleware (`/api/v1/team/`): one series.
  return route.length > 1 && route.endsWith('/') ? route.slice(0, -1) : route;
}

/** Without the query string, and without the token of a mailed link. */
function pathOf(url: string): string {
  const q = url.indexOf('?');
  return loggablePath(q === -1 ? url : url.slice(0, q));
}

export function requestLine(req: Request, res: Response, durationMs: number): RequestLine {
  const line: RequestLine = {
    reqId: String(req.id),
    method: req.method,
    path: pathOf(req.originalUrl ?? req.url),
    route: routeOf(req),
    status: res.statusCode,
    durationMs: Math.round(durationMs * 100) / 100,
  };
  // What the API's authentication leaves on the request (a token and its user), by its shape.
  const principal = req.user as { tokenId: number; user: { id: number } } | undefined;
  if (principal) {
    line.userId = principal.user.id;
    line.tokenId = principal.tokenId;
  } else {
    const userId = actingUserOf(req);
    if (userId !== undefined) line.userId = userId;
  }
  return line;
}
