import { Inject, Injectable, type NestMiddleware } from '@nestjs/common';
import { csrfSync } from 'csrf-sync';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import session from 'express-session';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { takeFlash } from '../common/web/flash.js';
import { UsersRepository } from '../users/users.repository.js';
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

const csrf = csrfSync({
  getTokenFromRequest: (req) => (req.body as Record<string, unknown> | undefined)?._csrf as string,
  size: 32,
});

/** Synchronizer-token CSRF protection: every state-changing form posts `_csrf`. */
@Injectable()
export class CsrfMiddleware implements NestMiddleware {
  use(req: Request, res: Response, next: NextFunction): void {
    csrf.csrfSynchronisedProtection(req, res, next);
  }
}

/**
 * Resolves the signed-in user of the session for guards, controllers and views, and ends a
 * session that is older than the absolute timeout however active it has been.
 */
@Injectable()
export class CurrentUserMiddleware implements NestMiddleware {
  private readonly absoluteMs: number;

  constructor(
    @Inject(CONFIG) config: Config,
    private readonly users: UsersRepository,
  ) {
    this.absoluteMs = config.web.sessionAbsoluteHours * 3_600_000;
  }

  async use(req: Request, res: Response, next: NextFunction): Promise<void> {
    try {
      const { userId, signedInAt = 0 } = req.session ?? {};
      if (userId !== undefined && Date.now() - signedInAt > this.absoluteMs) {
        // A fresh, empty session: the old one is gone from the store, forms still get a token.
        await new Promise<void>((resolve, reject) =>
          req.session.regenerate((e) => (e ? reject(e) : resolve())),
        );
      } else if (userId !== undefined) {
        const user = await this.users.findById(userId);
        if (user) {
          req.currentUser = user;
          res.locals.currentUser = { id: user.id, name: user.name, email: user.email };
        }
      }
      // A function, so the token is made only when a page renders a form ({{csrfToken}} calls
      // it): redirects and error pages store no session.
      res.locals.csrfToken = () => (req.session ? req.csrfToken?.() : undefined);
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
      this.csrf.use(req, res, (csrfError?: unknown) => {
        if (csrfError) return next(csrfError);
        void this.currentUser.use(req, res, next);
      });
    });
  }
}

/**
 * express-session sends a response's headers before its store has saved the session (it holds
 * back only the last byte of the body), and a browser follows a redirect as soon as it has the
 * headers: the next page could load the session without the flash or the new token just put in
 * it. A redirect from a page therefore waits until the session is saved.
 */
function saveSessionBeforeRedirect(req: Request, res: Response): void {
  const redirect = res.redirect.bind(res) as (...args: unknown[]) => void;
  res.redirect = ((...args: unknown[]) => {
    // A session with nothing in it is not stored: an anonymous redirect writes no row.
    if (!req.session || !Object.keys(req.session).some((key) => key !== 'cookie')) {
      return redirect(...args);
    }
    req.session.save((error) => (error ? req.next?.(error) : redirect(...args)));
  }) as Response['redirect'];
}
