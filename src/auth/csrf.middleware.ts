import { Injectable, type NestMiddleware } from '@nestjs/common';
import { csrfSync } from 'csrf-sync';
import type { NextFunction, Request, Response } from 'express';

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
