import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import type { TokenPrincipal } from '../../tokens/tokens.service.js';
import { AuthenticationError } from '../../tokens/tokens.errors.js';
import { BearerStrategy } from './bearer.strategy.js';

const MALFORMED_HEADER = 400;

interface Attempt {
  success(principal: TokenPrincipal): void;
  fail(challenge?: string | number, status?: number): void;
  error(error: unknown): void;
  authenticate(req: Request): void;
}

/**
 * Runs the passport-http-bearer strategy for one request, as passport.authenticate() does (a
 * fresh object over the strategy with success/fail/error), without building passport's
 * middleware and @nestjs/passport's wrapper anew for every request, and turns the strategy's
 * failures into the API's error codes.
 */
@Injectable()
export class BearerAuthenticator {
  constructor(private readonly strategy: BearerStrategy) {}

  authenticate(req: Request): Promise<TokenPrincipal> {
    return new Promise((resolve, reject) => {
      const attempt = Object.create(this.strategy) as Attempt;
      attempt.success = resolve;
      attempt.error = reject;
      // A bare challenge means no bearer token was sent; 400, a malformed Bearer header.
      attempt.fail = (challenge, status) =>
        reject(
          new AuthenticationError(
            challenge === MALFORMED_HEADER || status === MALFORMED_HEADER
              ? 'invalid_token'
              : 'missing_token',
          ),
        );
      attempt.authenticate(req);
    });
  }
}
