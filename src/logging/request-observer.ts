import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { performance } from 'node:perf_hooks';
import { assignRequestId } from './request-id.js';

/** Told about every response when it closes: the request log and the metrics. */
export type ResponseWatcher = (req: Request, res: Response, durationMs: number) => void;

/**
 * The first middleware of every request: gives it its id (`assignRequestId`) and, when anyone
 * watches, times it and tells each watcher once the response has closed. One layer and one
 * listener however many watchers there are: each layer and listener is paid on every request.
 */
export function observeRequests(watchers: ResponseWatcher[]): RequestHandler {
  if (watchers.length === 0) return assignRequestId;
  return (req: Request, res: Response, next: NextFunction): void => {
    const start = performance.now();
    res.on('close', () => {
      const durationMs = performance.now() - start;
      for (const watch of watchers) watch(req, res, durationMs);
    });
    assignRequestId(req, res, next);
  };
}
