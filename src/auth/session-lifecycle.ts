import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { User } from '../users/user.entity.js';
import { SESSION_COOKIE } from './web-session.middleware.js';

/** Only a path on this site, and not one of the sign-in pages themselves. */
function isLocalPage(path: string | undefined): path is string {
  return (
    typeof path === 'string' &&
    /^\/(?![/\\])[^\s]*$/.test(path) &&
    !/^\/(login|register|logout)\b/.test(path)
  );
}

function promisify(run: (done: (err?: unknown) => void) => void): Promise<void> {
  return new Promise((resolve, reject) => run((err) => (err ? reject(err) : resolve())));
}

/** Signing in and out of a browser session. */
@Injectable()
export class SessionLifecycle {
  /**
   * A new session id at sign-in, so a session id planted before it is worth nothing after.
   * Returns where to go next: the page asked for before signing in, or the dashboard.
   */
  async start(req: Request, user: User): Promise<string> {
    const returnTo = req.session.returnTo;
    await promisify((done) => req.session.regenerate(done));
    req.session.userId = user.id;
    req.session.signedInAt = Date.now();
    await promisify((done) => req.session.save(done));
    return isLocalPage(returnTo) ? returnTo : '/dashboard';
  }

  /** Deletes the session from the store, so the cookie is dead on every instance. */
  async end(req: Request, res: Response): Promise<void> {
    await promisify((done) => req.session.destroy(done));
    res.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'lax' });
  }
}
