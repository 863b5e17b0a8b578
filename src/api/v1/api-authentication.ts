import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { ApiRateLimiter, type ClientAttempt } from '../../rate-limit/api-rate-limiter.js';
import { AuthenticationError } from '../../tokens/tokens.errors.js';
import { TokensService, type TokenPrincipal } from '../../tokens/tokens.service.js';
import { BearerAuthenticator } from './bearer-authenticator.js';

/**
 * The one place an API request is authenticated: the API module mounts it on its routes, ahead
 * of their guard and handler. The attempt is counted against the client address before the token
 * is looked up and, once the token proves good, on the token instead (the rate limits); a success
 * is counted in the token's usage (in memory, written later), a refusal of a known token kept for
 * the security log. The principal goes on `req.user`, a refusal on `req.authRefusal`: the route's
 * guard answers it, so it is logged and counted under its route. A path or method no route takes
 * is answered 404 or 405 whatever its token, and costs no lookup (docs/architecture.md).
 */
@Injectable()
export class ApiAuthentication implements NestMiddleware {
  constructor(
    private readonly bearer: BearerAuthenticator,
    private readonly tokens: TokensService,
    private readonly limiter: ApiRateLimiter,
  ) {}

  use(req: Request, res: Response, next: NextFunction): void {
    this.authenticate(req, res).then(
      () => next(),
      (refusal: unknown) => {
        req.authRefusal = refusal;
        next();
      },
    );
  }

  async authenticate(request: Request, response: Response): Promise<TokenPrincipal> {
    // The attempt is counted against the client IP before the token is looked up (an atomic
    // step), and given back once the token proves good.
    let reserved: ClientAttempt | undefined;
    if (this.limiter.enabled) {
      const reserving = this.limiter.reserveClient(request, response);
      reserved = reserving instanceof Promise ? await reserving : reserving;
    }
    let principal: TokenPrincipal;
    try {
      principal = await this.bearer.authenticate(request);
    } catch (error) {
      if (error instanceof AuthenticationError && error.refused) {
        this.tokens.recordRefusal(error, {
          ip: request.ip,
          userAgent: request.headers['user-agent'],
        });
      }
      if (reserved) {
        if (error instanceof AuthenticationError) this.limiter.reportFailure(response, reserved);
        else await this.limiter.giveBack(reserved);
      }
      throw error;
    }
    this.tokens.recordUse(principal, {
      ip: request.ip,
      userAgent: request.headers['user-agent'],
    });
    if (reserved) {
      const counting = this.limiter.admitToken(reserved, principal.tokenId, response);
      if (counting) await counting;
    }
    // Only a request within its token's budget carries it on.
    request.user = principal;
    return principal;
  }
}
