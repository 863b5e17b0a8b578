import { describe, expect, it, jest } from '@jest/globals';
import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { ApiRateLimiter } from '../rate-limit/api-rate-limiter.js';
import { TokensService } from '../tokens/tokens.service.js';
import { AccessGuard, MissingAuthPolicyError } from './access.guard.js';
import { BearerAuth, Public } from '../common/auth/auth-policy.decorator.js';
import { BearerAuthenticator } from './bearer-authenticator.js';

class Routes {
  @Public() open(): void {}
  @BearerAuth('user:read') guarded(): void {}
  undecided(): void {}
}

function contextFor(handler: keyof Routes, user?: object): ExecutionContext {
  return {
    getHandler: () => Routes.prototype[handler],
    getClass: () => Routes,
    switchToHttp: () => ({
      getRequest: () => ({ user, ip: '203.0.113.9', headers: { 'user-agent': 'curl/8.5.0' } }),
      getResponse: () => ({}),
    }),
  } as unknown as ExecutionContext;
}

describe('AccessGuard', () => {
  async function build() {
    const principal = { tokenId: 1 };
    const authenticate = jest.fn<() => Promise<object>>().mockResolvedValue(principal);
    const assertAbility = jest.fn();
    const recordUse = jest.fn();
    const moduleRef = await Test.createTestingModule({
      providers: [
        AccessGuard,
        Reflector,
        { provide: BearerAuthenticator, useValue: { authenticate } },
        { provide: TokensService, useValue: { assertAbility, recordUse } },
        { provide: ApiRateLimiter, useValue: { enabled: false } },
      ],
    }).compile();
    return {
      guard: moduleRef.get(AccessGuard),
      authenticate,
      assertAbility,
      recordUse,
      principal,
    };
  }

  it('should let a public route through without authenticating', async () => {
    const { guard, authenticate } = await build();
    await expect(guard.canActivate(contextFor('open'))).resolves.toBe(true);
    expect(authenticate).not.toHaveBeenCalled();
  });

  it('should authenticate and check the ability when a route needs a bearer token', async () => {
    const { guard, authenticate, assertAbility, principal } = await build();
    await expect(guard.canActivate(contextFor('guarded'))).resolves.toBe(true);
    expect(authenticate).toHaveBeenCalled();
    expect(assertAbility).toHaveBeenCalledWith(principal, 'user:read');
  });

  it("should count an authenticated request in the token's usage with its address and client", async () => {
    const { guard, recordUse, principal } = await build();
    await guard.canActivate(contextFor('guarded'));
    expect(recordUse).toHaveBeenCalledWith(principal, {
      ip: '203.0.113.9',
      userAgent: 'curl/8.5.0',
    });
  });

  it('should refuse a route that declares no policy', async () => {
    const { guard } = await build();
    await expect(guard.canActivate(contextFor('undecided'))).rejects.toBeInstanceOf(
      MissingAuthPolicyError,
    );
  });
});
