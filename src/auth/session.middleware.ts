import { Inject, Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import session from 'express-session';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { TypeormSessionStore } from './typeorm-session.store.js';

export const SESSION_COOKIE = 'tessera.sid';

/** How long a session nobody signed in to lives without use. */
export const GUEST_SESSION_MS = 15 * 60_000;

/** Database-backed sessions: HttpOnly, SameSite=Lax, Secure over HTTPS, idle timeout rolling. */
@Injectable()
export class SessionMiddleware implements NestMiddleware {
  private readonly handler: RequestHandler;

  constructor(@Inject(CONFIG) config: Config, store: TypeormSessionStore) {
    this.handler = session({
      name: SESSION_COOKIE,
      secret: config.web.sessionSecret,
      store,
      genid: (req) => store.generateId(req as Request),
      resave: false,
      saveUninitialized: false,
      rolling: true,
      // 'auto': Secure whenever the request came over HTTPS (through a trusted proxy too).
      cookie: {
        httpOnly: true,
        sameSite: 'lax',
        secure: 'auto',
        maxAge: config.web.sessionIdleMinutes * 60_000,
      },
    });
  }

  use(req: Request, res: Response, next: NextFunction): void {
    this.handler(req, res, (error?: unknown) => {
      // A visitor's session holds no more than a form's CSRF token or a message: it ends after
      // minutes, so anonymous page views cannot pile rows up for hours. Signing in starts a new
      // session with the full idle timeout.
      if (!error && req.session && req.session.userId === undefined) {
        req.session.cookie.maxAge = GUEST_SESSION_MS;
      }
      next(error);
    });
  }
}
