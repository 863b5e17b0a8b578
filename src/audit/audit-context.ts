import { AsyncLocalStorage } from 'node:async_hooks';
import type { NextFunction, Request, Response } from 'express';

/**
 * The page request an event is recorded in, so services need not pass the address, the browser
 * and the session down to every change they make. Pages only: API requests record their events
 * in the token usage's flush, with what they carry.
 */
const storage = new AsyncLocalStorage<Request>();

export function auditContext(req: Request, _res: Response, next: NextFunction): void {
  storage.run(req, next);
}

/** The page request under way, if any (none in the command line or a timer's work). */
export function currentRequest(): Request | undefined {
  return storage.getStore();
}
