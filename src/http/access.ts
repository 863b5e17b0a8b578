import {
  createParamDecorator,
  Injectable,
  Optional,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { AlreadySignedInError, SignInRequiredError } from '../auth/auth.errors.js';
import { bearerRefusal } from '../auth/bearer-refusal.js';
import { sessionHandle } from '../auth/session-digests.js';
import type { Actor, Client, PersonActor } from '../common/actor.js';
import { AUTH_POLICY, type AuthPolicy } from '../common/auth-policy.decorator.js';
import { Metrics } from '../metrics/metrics.js';
import { actorOn, setActor, tokenOn } from './request-state.js';

/**
 * Who acts in a request (`@CurrentActor()`, built once from what the pages' session or the API's
 * middleware found), and whether the route lets them (`AccessGuard`, global).
 */

function clientOf(req: Request): Client {
  return { ip: req.ip ?? null, userAgent: req.headers['user-agent'] ?? null };
}

/**
 * Who acts in this request, built once and kept on it: the token the API's middleware accepted,
 * the person the page context found signed in (`signedInActor`), or a visitor.
 */
export function actorOf(req: Request): Actor {
  const known = actorOn(req);
  if (known) return known;
  const token = tokenOn(req);
  if (token) {
    return setActor(req, {
      kind: 'token',
      userId: token.user.id,
      tokenId: token.tokenId,
      abilities: token.abilities,
      client: clientOf(req),
    });
  }
  return setActor(req, { kind: 'visitor', client: clientOf(req) });
}

/**
 * The person who has just signed in to this request's session (which `actorOf` may have seen as
 * a visitor's): the request acts for them from here on.
 */
export function signedInActor(req: Request, userId: number): PersonActor {
  return setActor(req, {
    kind: 'person',
    userId,
    session: req.sessionID ? sessionHandle(req.sessionID) : null,
    client: clientOf(req),
  } satisfies PersonActor);
}

/** Who acts in the request: the one way controllers learn it. */
export const CurrentActor = createParamDecorator((_: unknown, ctx: ExecutionContext): Actor =>
  actorOf(ctx.switchToHttp().getRequest<Request>()),
);

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
        if (actorOn(request)?.kind !== 'person') throw new SignInRequiredError();
        return true;
      case 'guest':
        if (actorOn(request)?.kind === 'person') throw new AlreadySignedInError();
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
   * policy, or a pinned team left) and whether its policy allows the ability, both found by the
   * middleware in the same query; each outcome counted.
   */
  private checkBearer(request: Request, ability: string | undefined, actsInTeam: boolean): true {
    const principal = tokenOn(request);
    if (!principal) throw new Error('A bearer route outside the API: nothing read its token');
    const refusal = bearerRefusal(principal, ability, actsInTeam);
    this.metrics?.authentication(refusal ? refusal.code : 'success');
    if (refusal) throw refusal;
    return true;
  }
}
