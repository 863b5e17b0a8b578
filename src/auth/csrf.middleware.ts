import { Inject, Injectable, type NestMiddleware } from '@nestjs/common';
import cookieParser from 'cookie-parser';
import { doubleCsrf } from 'csrf-csrf';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { createHmac } from 'node:crypto';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';

export const CSRF_COOKIE = 'tessera.csrf';

/**
 * CSRF protection for every form, kept nowhere on the server: a signed double-submit token
 * (csrf-csrf). The token is an HMAC, under a key derived from SESSION_SECRET, of a random value
 * and the signed-in session's id; it goes in an HttpOnly cookie and in the form's `_csrf`, and a
 * POST must bring both, equal, with an HMAC that matches. A visitor's token is bound to no
 * session, so viewing the sign-in page stores nothing; once signed in, a token from before (or
 * from another session) no longer matches.
 */
@Injectable()
export class CsrfMiddleware implements NestMiddleware {
  private readonly parseCookies = cookieParser();
  private readonly protect: RequestHandler;
  private readonly generate: (req: Request, res: Response) => string;

  constructor(@Inject(CONFIG) config: Config) {
    const key = createHmac('sha256', config.web.sessionSecret).update('csrf').digest('hex');
    const { doubleCsrfProtection, generateCsrfToken } = doubleCsrf({
      getSecret: () => key,
      getSessionIdentifier: (req) => (req.session?.userId !== undefined ? req.sessionID : ''),
      cookieName: CSRF_COOKIE,
      getCsrfTokenFromRequest: (req) =>
        (req.body as Record<string, unknown> | undefined)?._csrf as string | undefined,
      size: 32,
    });
    this.protect = doubleCsrfProtection;
    // Secure whenever the request came over HTTPS (through a trusted proxy too), as the session's.
    this.generate = (req, res) =>
      generateCsrfToken(req, res, {
        cookieOptions: { httpOnly: true, sameSite: 'lax', path: '/', secure: req.secure },
      });
  }

  use(req: Request, res: Response, next: NextFunction): void {
    this.parseCookies(req, res, () => {
      this.protect(req, res, (error?: unknown) => {
        // Made only when a page renders a form (`{{csrfToken}}` calls it), once however many.
        let token: string | undefined;
        req.csrfToken = () => (token ??= this.generate(req, res));
        next(error);
      });
    });
  }
}
