import {
  applyDecorators,
  Inject,
  Injectable,
  SetMetadata,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { from, mergeMap, type Observable } from 'rxjs';
import { actingUserOf } from './request-state.js';
import type { Config } from '../config/config.js';
import type { RateLimitConfig } from '../config/security.config.js';
import { CONFIG } from '../config/config.module.js';
import { clientKeyOf } from '../rate-limit/client-address.js';
import { RateLimitedError } from '../rate-limit/rate-limit.errors.js';
import type { LimitKind } from '../rate-limit/limit-kinds.js';
import { RateLimitStorage } from '../rate-limit/rate-limit.storage.js';

const HOUR_MS = 3_600_000;

/** The routes' named limits: how many per hour, and whom they count. */
const ROUTE_LIMITS = {
  register: { per: 'ip', limit: (c: RateLimitConfig) => c.registrationsPerHour },
  'team-invites': { per: 'user', limit: (c: RateLimitConfig) => c.teamInvitesPerHour },
  'forgot-password': { per: 'ip', limit: (c: RateLimitConfig) => c.passwordResetsPerHour },
  'verify-email-resend': {
    per: 'user',
    limit: (c: RateLimitConfig) => c.verificationResendsPerHour,
  },
  'sign-up-resend': { per: 'ip', limit: (c: RateLimitConfig) => c.verificationResendsPerHour },
  'token-reports': { per: 'ip', limit: (c: RateLimitConfig) => c.tokenReportsPerHour },
  'passkey-challenges': {
    per: 'ip',
    limit: (c: RateLimitConfig) => c.passkeyChallengesPerHour,
  },
} as const satisfies Partial<Record<LimitKind, unknown>>;

export type RouteLimitName = keyof typeof ROUTE_LIMITS;

const ROUTE_LIMIT = 'tessera:route-limit';

/**
 * Every request that reaches the route counts, per client IP or per signed-in person, whatever
 * its outcome: counted after the guards (a request refused for its access uses up nothing), and
 * inside whatever the route's own interceptors answer without acting (the API's replay of an
 * `Idempotency-Key` already answered is not a new request).
 */
@Injectable()
export class RouteLimitInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    @Inject(CONFIG) private readonly config: Config,
    private readonly storage: RateLimitStorage,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return from(this.count(context)).pipe(mergeMap(() => next.handle()));
  }

  private async count(context: ExecutionContext): Promise<void> {
    const rateLimit = this.config.security.rateLimit;
    if (!rateLimit.enabled) return;
    const name = this.reflector.get<RouteLimitName>(ROUTE_LIMIT, context.getHandler());
    const { per, limit } = ROUTE_LIMITS[name];
    const req = context.switchToHttp().getRequest<Request>();
    const who = per === 'ip' ? clientKeyOf(req.ip) : `user:${actingUserOf(req) ?? 'none'}`;
    const allowed = limit(rateLimit);
    const window = await this.storage.hit(`route:${name}:${who}`, HOUR_MS, name, allowed);
    if (window.count > allowed) {
      throw new RateLimitedError(Math.max(1, Math.ceil(window.resetMs / 1000)));
    }
  }
}

/**
 * Limits the route by one of the named limits above. Its interceptor runs inside those applied
 * before it (the API's `ApiEndpoint` applies it last, with its `limit` option).
 */
export const RouteLimit = (name: RouteLimitName) =>
  applyDecorators(SetMetadata(ROUTE_LIMIT, name), UseInterceptors(RouteLimitInterceptor));
