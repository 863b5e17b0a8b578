import { Injectable, Optional, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { Metrics } from '../metrics/metrics.js';
import {
  AlreadySignedInError,
  InsufficientScopeError,
  SignInRequiredError,
} from './auth.errors.js';
import { AUTH_POLICY, type AuthPolicy } from '../common/auth-policy.decorator.js';
import type { DomainError } from '../common/errors/domain.error.js';

export class MissingAuthPolicyError extends Error {}

/**
 * The global guard: each route declares its policy, and a route that declares none is refused
 * rather than left open. It authenticates nothing itself: pages' sessions are read by the pages'
 * middleware and API tokens by the API's (`ApiAuthentication`, which also answers a refused
 * token); here a route's policy is checked against what they found, and a bearer route's ability
 * against the token's.
 */
@Injectable()
export class AccessGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    // Present when METRICS_ENABLED (and never in the operators' CLI).
    @Optional() private readonly metrics?: Metrics,
  ) {}

  /** Each route's policy, read from its metadata once (a handler with the class it ran for). */
  private readonly policies = new WeakMap<object, { of: object; policy: AuthPolicy | undefined }>();

  canActivate(context: ExecutionContext): boolean {
    const policy = this.policyOf(context.getHandler(), context.getClass());
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
        return this.checkBearer(request, policy.ability, policy.actsInTeam !== false);
    }
  }

  private policyOf(handler: object, controller: object): AuthPolicy | undefined {
    const known = this.policies.get(handler);
    if (known?.of === controller) return known.policy;
    const policy = this.reflector.getAllAndOverride<AuthPolicy | undefined>(AUTH_POLICY, [
      handler as () => unknown,
      controller as () => unknown,
    ]);
    this.policies.set(handler, { of: controller, policy });
    return policy;
  }

  /**
   * The token the API's middleware accepted (it answers a refusal itself), with the route's
   * ability, and for a route acting in the token's team, that team's refusal of the token (its
   * policy, or a pinned team left), which the middleware found in the same query; each outcome
   * counted.
   */
  private checkBearer(request: Request, ability: string | undefined, actsInTeam: boolean): true {
    const principal = request.user as
      { abilities: readonly string[]; teamRefusal?: DomainError | null } | undefined;
    if (!principal) throw new Error('A bearer route outside the API: nothing read its token');
    if (actsInTeam && principal.teamRefusal) {
      this.metrics?.authentication(principal.teamRefusal.code);
      throw principal.teamRefusal;
    }
    if (ability && !principal.abilities.includes(ability)) {
      const refusal = new InsufficientScopeError(ability);
      this.metrics?.authentication(refusal.code);
      throw refusal;
    }
    this.metrics?.authentication('success');
    return true;
  }
}
