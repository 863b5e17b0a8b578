import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import { Scheduler } from '../scheduler/scheduler.js';
import { ACCESS_LOGGER, ROOT_LOGGER } from './root-logger.js';

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
 * Told about every response when it closes (http/request-log.ts makes its line): the access log
 * and the metrics. `aborted`: the response was not sent to its end.
 */
export type ResponseWatcher = (line: RequestLine, aborted: boolean) => void;

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
  watcher(): ResponseWatcher {
    const { access, root } = this;
    return (line, aborted) => {
      if (aborted) root.warn(line, 'request aborted');
      else if (line.status >= 500) root.error(line, 'request failed');
      else access.info(line, 'request completed');
    };
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
