import { pageSession } from './page-session.js';
import type { Request } from 'express';
import { sessionHandle } from '../../auth/session-digests.js';

/**
 * The session a passkey challenge is bound to, by its handle (a digest of its id). A visitor's
 * session is kept from now on (it would otherwise be new on every request), so the answer
 * comes back to the session that asked.
 */
export function passkeySessionOf(req: Request, now: number): string {
  pageSession(req).passkeyAskedAt = now;
  return sessionHandle(req.sessionID);
}

/** The session the answer came in: the one its challenge must have been handed to. */
export function answeringSessionOf(req: Request): string {
  return sessionHandle(req.sessionID);
}
