import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import { loggablePath } from '../common/http/loggable-path.js';
import type { ResponseWatcher } from './request-observer.js';

/** One line per request, the fields an operator searches by. */
export interface RequestLine {
  reqId: string;
  method: string;
  /** Without the query string (queries carry data, and data stays out of logs) or a link's token. */
  path: string;
  /** The route's pattern, so lines group by endpoint rather than by the ids in the path. */
  route: string | null;
  status: number;
  durationMs: number;
  userId?: number;
  tokenId?: number;
}

/**
 * The pattern of the route that answered (`/teams/:id`), or whose middleware did (a refused
 * token); for a static file, the folder it was served from (`/css`); null when nothing matched.
 */
export function routeOf(req: Request): string | null {
  const route = (req.route as { path?: string } | undefined)?.path;
  if (route === undefined) return req.baseUrl || null;
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
  } else if (req.currentUser) {
    line.userId = req.currentUser.id;
  }
  return line;
}

/**
 * One JSON line when the response is closed, with the outcome: through `access` (buffered), or
 * through `root` (written at once) at `warn` for an aborted request and `error` for a 5xx answer.
 * `observeRequests` calls it.
 *
 * Written here rather than with pino-http (which nestjs-pino mounts): pino-http's per-request
 * bookkeeping (a child logger with the serialized request, three listeners, arrays and symbols
 * added to req and res) cost about 40 µs of CPU per request in our benchmark, this about 13.
 */
export function logRequest(access: Logger, root: Logger): ResponseWatcher {
  return (req, res, durationMs) => {
    const line = requestLine(req, res, durationMs);
    if (!res.writableFinished) root.warn(line, 'request aborted');
    else if (line.status >= 500) root.error(line, 'request failed');
    else access.info(line, 'request completed');
  };
}
