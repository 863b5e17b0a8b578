import { Injectable, Optional, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { DomainError } from '../common/errors/domain.error.js';
import { Metrics } from '../metrics/metrics.js';
import { ApiRateLimiter } from '../rate-limit/api-rate-limiter.js';
import type { Ability } from '../common/auth/abilities.js';
import { AuthenticationError } from '../tokens/tokens.errors.js';
import { TokensService, type TokenPrincipal } from '../tokens/tokens.service.js';
import { AlreadySignedInError, SignInRequiredError } from './auth.errors.js';
import { AUTH_POLICY, type AuthPolicy } from '../common/auth/auth-policy.decorator.js';
import { BearerAuthenticator } from './bearer-authenticator.js';

export class MissingAuthPolicyError extends Error {}

/**
 * The global guard: each route declares its policy, and a route that declares none is refused
 * rather than left open.
 */
@Injectable()
export class AccessGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly bearer: BearerAuthenticator,
    private readonly tokens: TokensService,
    private readonly limiter: ApiRateLimiter,
    // Present when METRICS_ENABLED (and never in the operators' CLI).
    @Optional() private readonly metrics?: Metrics,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const policy = this.reflector.getAllAndOverride<AuthPolicy | undefined>(AUTH_POLICY, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (!policy) {
      throw new MissingAuthPolicyError(
        `${context.getClass().name}.${context.getHandler().name} has no auth policy`,
      );
    }
    const request = context.switchToHttp().getRequest<Request>();
    switch (policy.kind) {
      case 'public':
        return true;
      case 'session':
        if (!request.currentUser) throw new SignInRequiredError();
        return true;
      case 'guest':
        if (request.currentUser) throw new AlreadySignedInError();
        return true;
      case 'bearer':
        return await this.checkBearer(context, request, policy.ability);
    }
  }

  /** The bearer policy; with metrics on, its outcome is counted: success, or the refusal's code. */
  private async checkBearer(
    context: ExecutionContext,
    request: Request,
    ability: Ability | undefined,
  ): Promise<true> {
    try {
      const principal = await this.authenticateBearer(context, request);
      if (ability) this.tokens.assertAbility(principal, ability);
    } catch (error) {
      this.metrics?.authentication(error instanceof DomainError ? error.code : 'error');
      throw error;
    }
    this.metrics?.authentication('success');
    return true;
  }

  /**
   * The bearer strategy, with failures counted per client IP and successes per token, and each
   * success counted in the token's usage (in memory, written later).
   */
  private async authenticateBearer(
    context: ExecutionContext,
    request: Request,
  ): Promise<TokenPrincipal> {
    const response = context.switchToHttp().getResponse<Response>();
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
