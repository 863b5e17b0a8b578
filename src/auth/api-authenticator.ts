import { Injectable, Optional } from '@nestjs/common';
import type { Request, Response } from 'express';
import { DomainError } from '../common/errors/domain.error.js';
import { Metrics } from '../metrics/metrics.js';
import { ApiRateLimiter, type ClientAttempt } from '../rate-limit/api-rate-limiter.js';
import { AuthenticationError } from '../tokens/tokens.errors.js';
import { TokensService, type TokenPrincipal } from '../tokens/tokens.service.js';
import { BearerAuthenticator } from './bearer-authenticator.js';

/**
 * Authenticates an API request once: the bearer strategy, each attempt counted against the
 * client address before the token is looked up and, once it proves good, on the token instead
 * (the rate limits), each success counted in the token's usage (in
 * memory, written later) and each refusal of a known token kept for the security log. The
 * principal goes on `req.user`. The API's branch runs it before routing for the bearer routes it
 * knows (`bearerRoutePaths`); the global guard runs it for any other bearer route, and only checks
 * the ability where it already ran.
 */
@Injectable()
export class ApiAuthenticator {
  constructor(
    private readonly bearer: BearerAuthenticator,
    private readonly tokens: TokensService,
    private readonly limiter: ApiRateLimiter,
    // Present when METRICS_ENABLED (and never in the operators' CLI).
    @Optional() private readonly metrics?: Metrics,
  ) {}

  async authenticate(request: Request, response: Response): Promise<TokenPrincipal> {
    try {
      return await this.run(request, response);
    } catch (error) {
      this.countRefusal(error);
      throw error;
    }
  }

  /** With metrics on, a refusal is counted by its code; a success once the ability is checked. */
  countRefusal(error: unknown): void {
    this.metrics?.authentication(error instanceof DomainError ? error.code : 'error');
  }

  countSuccess(): void {
    this.metrics?.authentication('success');
  }

  private async run(request: Request, response: Response): Promise<TokenPrincipal> {
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
    request.user = principal;
    this.tokens.recordUse(principal, {
      ip: request.ip,
      userAgent: request.headers['user-agent'],
    });
    if (reserved) {
      const counting = this.limiter.admitToken(reserved, principal.tokenId, response);
      if (counting) await counting;
    }
    return principal;
  }
}
