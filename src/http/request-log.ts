import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { EVERY_PATH } from '../common/http/every-path.js';
import { REQUEST_ID_HEADER } from '../common/http/request-id-header.js';
import { ACCESS_LOGGER, ROOT_LOGGER } from '../logging/root-logger.js';
import { Scheduler } from '../scheduler/scheduler.js';
import { actingUserOf, requestIdOf, setRequestId, tokenOn } from './request-state.js';

export { REQUEST_ID_HEADER };

/**
 * Every request from its first step to its log line: its id, its timer, and what the access
 * log (its line) and the metrics (its outcome) are told when the response closes.
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
  setRequestId(req, id);
  res.setHeader(REQUEST_ID_HEADER, id);
  next();
}

/** What the metrics are told of every response. */
export interface RequestOutcome {
  method: string;
  route: string | null;
  status: number;
  durationMs: number;
}

/**
 * Who is told of every response when it closes: the access log, its whole line; the metrics,
 * its outcome alone (a line is made only when the log is kept).
 */
export interface RequestWatchers {
  log?: AccessLog;
  metrics?: (outcome: RequestOutcome) => void;
}

/**
 * The first middleware of every request: gives it its id and, when anyone watches, times it and
 * tells the watchers once the response has closed. One layer and one listener however many
 * watchers there are: each layer and listener is paid on every request.
 */
export function observeRequests({ log, metrics }: RequestWatchers): RequestHandler {
  if (!log && !metrics) return assignRequestId;
  return (req: Request, res: Response, next: NextFunction): void => {
    const start = performance.now();
    res.on('close', () => {
      const durationMs = performance.now() - start;
      const route = routeOf(req);
      log?.write(requestLine(req, res, durationMs, route), !res.writableFinished);
      metrics?.({ method: req.method, route, status: res.statusCode, durationMs });
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

export function requestLine(
  req: Request,
  res: Response,
  durationMs: number,
  route = routeOf(req),
): RequestLine {
  const line: RequestLine = {
    reqId: requestIdOf(req) ?? '',
    method: req.method,
    path: pathOf(req.originalUrl ?? req.url),
    route,
    status: res.statusCode,
    durationMs: Math.round(durationMs * 100) / 100,
  };
  const userId = actingUserOf(req);
  if (userId !== undefined) line.userId = userId;
  const token = tokenOn(req);
  if (token) line.tokenId = token.tokenId;
  return line;
}

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

/** How often buffered access lines are written when traffic is too light to fill the buffer. */
export const ACCESS_LOG_FLUSH_MS = 1_000;

/**
 * The access log: one JSON line per request when its response is closed, with the outcome,
 * through the access logger (buffered by `createAccessLogger`, flushed every second by the
 * scheduler and at shutdown); the lines of aborted requests (`warn`) and 5xx answers (`error`)
 * go through the root logger, written at once, like every other warning and error.
 *
 * Written here rather than with pino-http (which nestjs-pino mounts): pino-http's per-request
 * bookkeeping (a child logger with the serialized request, three listeners, arrays and symbols
 * added to req and res) cost about 40 µs of CPU per request in our benchmark, this about 13.
 */
@Injectable()
export class AccessLog implements OnApplicationShutdown {
  constructor(
    @Inject(ACCESS_LOGGER) private readonly access: Logger,
    @Inject(ROOT_LOGGER) private readonly root: Logger,
    scheduler: Scheduler,
  ) {
    if (access !== root) {
      scheduler.every('access log', ACCESS_LOG_FLUSH_MS, () => this.flush());
    }
  }

  /** The watcher `observeRequests` tells of every response. */
  /** A closed response's line; `aborted`: the response was not sent to its end. */
  write(line: RequestLine, aborted: boolean): void {
    if (aborted) this.root.warn(line, 'request aborted');
    else if (line.status >= 500) this.root.error(line, 'request failed');
    else this.access.info(line, 'request completed');
  }

  flush(): Promise<void> {
    return new Promise((resolve) => this.access.flush(() => resolve()));
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.access !== this.root) await this.flush();
  }
}

/** Pages whose address carries a secret: the token of a link sent by mail (an invitation's too). */
const SECRET_IN_PATH =
  /^(\/(?:verify-email|reset-password|invitations|settings\/profile\/email)\/)(?!resend(?:\/|$)|pending\/)[^/]+/i;

/**
 * The path as a log line may show it: the token of an e-mail link (`/reset-password/<token>`)
 * replaced, so the logs hold no working link. Used by the request log and the exception filter's error log.
 */
export function loggablePath(path: string): string {
  return path.replace(SECRET_IN_PATH, '$1[redacted]');
}
