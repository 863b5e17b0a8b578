import { Injectable, Optional } from '@nestjs/common';
import type { Request, Response } from 'express';
import { DomainError } from '../common/errors/domain.error.js';
import { Metrics } from '../metrics/metrics.js';
import { ApiRateLimiter } from '../rate-limit/api-rate-limiter.js';
import { AuthenticationError } from '../tokens/tokens.errors.js';
import { TokensService, type TokenPrincipal } from '../tokens/tokens.service.js';
import { BearerAuthenticator } from './bearer-authenticator.js';

/**
 * Authenticates an API request once: the bearer strategy, failures counted per client address
 * and successes per token (the rate limits), each success counted in the token's usage (in
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
      if (this.limiter.enabled && error instanceof AuthenticationError) {
        const counting = this.limiter.countFailure(request, response);
        if (counting) await counting;
      }
      throw error;
    }
    request.user = principal;
    this.tokens.recordUse(principal, {
      ip: request.ip,
      userAgent: request.headers['user-agent'],
    });
    if (this.limiter.enabled) {
      const counting = this.limiter.countToken(principal.tokenId, response);
      if (counting) await counting;
    }
    return principal;
  }
}
