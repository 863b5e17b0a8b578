import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { CsrfMiddleware } from './csrf.middleware.js';
import { CurrentUserMiddleware } from './current-user.middleware.js';
import { saveSessionBeforeRedirect } from './save-session-before-redirect.js';
import { SessionMiddleware } from './session.middleware.js';

/**
 * The pages' middleware as one layer: session, then CSRF, then the signed-in user. One layer
 * (not three) because every API request passes it too, and each layer costs a path check.
 */
@Injectable()
export class WebSessionMiddleware implements NestMiddleware {
  constructor(
    private readonly session: SessionMiddleware,
    private readonly csrf: CsrfMiddleware,
    private readonly currentUser: CurrentUserMiddleware,
  ) {}

  use(req: Request, res: Response, next: NextFunction): void {
    saveSessionBeforeRedirect(req, res);
    this.session.use(req, res, (error?: unknown) => {
      if (error) return next(error);
      // A refused form still knows who is signed in, so its error page has their header.
      this.csrf.use(req, res, (csrfError?: unknown) => {
        void this.currentUser.use(req, res, (userError?: unknown) => next(csrfError ?? userError));
      });
    });
  }
}
