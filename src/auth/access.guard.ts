import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import type { Ability } from '../common/auth/abilities.js';
import { TokensService, type TokenPrincipal } from '../tokens/tokens.service.js';
import { AlreadySignedInError, SignInRequiredError } from './auth.errors.js';
import { AUTH_POLICY, type AuthPolicy } from '../common/auth/auth-policy.decorator.js';
import { ApiAuthenticator } from './api-authenticator.js';

export class MissingAuthPolicyError extends Error {}

/**
 * The global guard: each route declares its policy, and a route that declares none is refused
 * rather than left open.
 */
@Injectable()
export class AccessGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly api: ApiAuthenticator,
    private readonly tokens: TokensService,
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

  /**
   * The bearer policy: the request authenticated before routing (the API's branch did it for
   * the bearer routes it knows), or here; then the route's ability.
   */
  private async checkBearer(
    context: ExecutionContext,
    request: Request,
    ability: Ability | undefined,
  ): Promise<true> {
    const principal =
      (request.user as TokenPrincipal | undefined) ??
      (await this.api.authenticate(request, context.switchToHttp().getResponse<Response>()));
    if (ability) {
      try {
        this.tokens.assertAbility(principal, ability);
      } catch (error) {
        this.api.countRefusal(error);
        throw error;
      }
    }
    this.api.countSuccess();
    return true;
  }
}
