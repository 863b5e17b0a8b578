import { describe, expect, it, jest } from '@jest/globals';
import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { ApiRateLimiter } from '../rate-limit/api-rate-limiter.js';
import { TokensService } from '../tokens/tokens.service.js';
import { AccessGuard, MissingAuthPolicyError } from './access.guard.js';
import { BearerAuth, Public } from './auth-policy.decorator.js';
import { BearerAuthGuard } from './bearer-auth.guard.js';

class Routes {
  @Public() open(): void {}
  @BearerAuth('user:read') guarded(): void {}
  undecided(): void {}
}

function contextFor(handler: keyof Routes, user?: object): ExecutionContext {
  return {
    getHandler: () => Routes.prototype[handler],
    getClass: () => Routes,
    switchToHttp: () => ({ getRequest: () => ({ user }), getResponse: () => ({}) }),
  } as unknown as ExecutionContext;
}

describe('AccessGuard', () => {
  async function build() {
    const canActivate = jest.fn<() => Promise<boolean>>().mockResolvedValue(true);
    const assertAbility = jest.fn();
    const moduleRef = await Test.createTestingModule({
      providers: [
        AccessGuard,
        Reflector,
        { provide: BearerAuthGuard, useValue: { canActivate } },
        { provide: TokensService, useValue: { assertAbility } },
        { provide: ApiRateLimiter, useValue: { enabled: false } },
      ],
    }).compile();
    return { guard: moduleRef.get(AccessGuard), canActivate, assertAbility };
  }

  it('should let a public route through without authenticating', async () => {
    const { guard, canActivate } = await build();
    await expect(guard.canActivate(contextFor('open'))).resolves.toBe(true);
    expect(canActivate).not.toHaveBeenCalled();
  });

  it('should authenticate and check the ability when a route needs a bearer token', async () => {
    const { guard, canActivate, assertAbility } = await build();
    const principal = { tokenId: 1 };
    await expect(guard.canActivate(contextFor('guarded', principal))).resolves.toBe(true);
    expect(canActivate).toHaveBeenCalled();
    expect(assertAbility).toHaveBeenCalledWith(principal, 'user:read');
  });

  it('should refuse a route that declares no policy', async () => {
    const { guard } = await build();
    await expect(guard.canActivate(contextFor('undecided'))).rejects.toBeInstanceOf(
      MissingAuthPolicyError,
    );
  });
});
