import { Inject, Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { takeFlash } from '../common/web/flash.js';
import { UsersRepository } from '../users/users.repository.js';
import { credentialStamp } from './credential-stamp.js';
import { noteActivity } from './session-activity.js';
import { Clock } from '../clock/clock.js';

/**
 * Resolves the signed-in user of the session for guards, controllers and views, and ends a
 * session that is older than the absolute timeout however active it has been, or that was
 * signed in under a password changed since.
 */
@Injectable()
export class CurrentUserMiddleware implements NestMiddleware {
  private readonly absoluteMs: number;

  constructor(
    @Inject(CONFIG) config: Config,
    private readonly users: UsersRepository,
    private readonly clock: Clock,
  ) {
    this.absoluteMs = config.web.sessionAbsoluteHours * 3_600_000;
  }

  async use(req: Request, res: Response, next: NextFunction): Promise<void> {
    try {
      const { userId, signedInAt = 0, credentialStamp: stamp } = req.session ?? {};
      const now = this.clock.nowMs();
      const live = userId !== undefined && now - signedInAt <= this.absoluteMs;
      const user = live ? await this.users.findById(userId) : null;
      if (user && stamp === credentialStamp(user.passwordHash)) {
        req.currentUser = user;
        noteActivity(req, now);
        res.locals.currentUser = { id: user.id, name: user.name, email: user.email };
      } else if (userId !== undefined) {
        // Too old, or signed in under a password since changed: a fresh, empty session. The old
        // one is gone from the store; forms still get a token.
        await new Promise<void>((resolve, reject) =>
          req.session.regenerate((e) => (e ? reject(e) : resolve())),
        );
      }
      // A function, so the token is made only when a page renders a form ({{csrfToken}} calls
      // it): redirects and error pages set no cookie.
      res.locals.csrfToken = () => req.csrfToken?.();
      // Times on the page are told relative to this ("3 minutes ago").
      res.locals.now = now;
      // Pages are per person: never kept, so Back cannot show a just-created token again.
      res.setHeader('Cache-Control', 'no-store');
      // A redirect's messages are shown by the page it lands on.
      if (req.method === 'GET') res.locals.flash = takeFlash(req.session);
      next();
    } catch (error) {
      next(error);
    }
  }
}
