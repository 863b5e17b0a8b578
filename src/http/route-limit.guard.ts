import {
  applyDecorators,
  Inject,
  Injectable,
  SetMetadata,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
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

/** Every request to the route counts, per client IP or per signed-in person, whatever its outcome. */
@Injectable()
export class RouteLimitGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(CONFIG) private readonly config: Config,
    private readonly storage: RateLimitStorage,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const rateLimit = this.config.security.rateLimit;
    if (!rateLimit.enabled) return true;
    const name = this.reflector.get<RouteLimitName>(ROUTE_LIMIT, context.getHandler());
    const { per, limit } = ROUTE_LIMITS[name];
    const req = context.switchToHttp().getRequest<Request>();
    const who = per === 'ip' ? clientKeyOf(req.ip) : `user:${actingUserOf(req) ?? 'none'}`;
    const window = await this.storage.hit(`route:${name}:${who}`, HOUR_MS, name);
    if (window.count > limit(rateLimit)) {
      throw new RateLimitedError(Math.max(1, Math.ceil(window.resetMs / 1000)));
    }
    return true;
  }
}

/** Limits the route by one of the named limits above. */
export const RouteLimit = (name: RouteLimitName) =>
  applyDecorators(SetMetadata(ROUTE_LIMIT, name), UseGuards(RouteLimitGuard));
