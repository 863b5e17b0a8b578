import { describe, expect, it, jest } from '@jest/globals';
import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { TokensService } from '../tokens/tokens.service.js';
import { AccessGuard, MissingAuthPolicyError } from './access.guard.js';
import { BearerAuth, Public } from '../common/auth/auth-policy.decorator.js';
import { ApiAuthenticator } from './api-authenticator.js';

class Routes {
  @Public() open(): void {}
  @BearerAuth('user:read') guarded(): void {}
  undecided(): void {}
}

function contextFor(handler: keyof Routes, user?: object): ExecutionContext {
  const request = { user, ip: '203.0.113.9', headers: { 'user-agent': 'curl/8.5.0' } };
  return {
    getHandler: () => Routes.prototype[handler],
    getClass: () => Routes,
    switchToHttp: () => ({ getRequest: () => request, getResponse: () => ({}) }),
  } as unknown as ExecutionContext;
}

describe('AccessGuard', () => {
  async function build() {
    const principal = { tokenId: 1 };
    const authenticate = jest.fn<() => Promise<object>>().mockResolvedValue(principal);
    const countRefusal = jest.fn();
    const countSuccess = jest.fn();
    const assertAbility = jest.fn();
    const moduleRef = await Test.createTestingModule({
      providers: [
        AccessGuard,
        Reflector,
        { provide: ApiAuthenticator, useValue: { authenticate, countRefusal, countSuccess } },
        { provide: TokensService, useValue: { assertAbility } },
      ],
    }).compile();
    return {
      guard: moduleRef.get(AccessGuard),
      authenticate,
      countRefusal,
      countSuccess,
      assertAbility,
      principal,
    };
  }

  it('should let a public route through without authenticating', async () => {
    const { guard, authenticate } = await build();
    await expect(guard.canActivate(contextFor('open'))).resolves.toBe(true);
    expect(authenticate).not.toHaveBeenCalled();
  });

  it('should authenticate and check the ability when a route needs a bearer token', async () => {
    const { guard, authenticate, assertAbility, countSuccess, principal } = await build();
    await expect(guard.canActivate(contextFor('guarded'))).resolves.toBe(true);
    expect(authenticate).toHaveBeenCalled();
    expect(assertAbility).toHaveBeenCalledWith(principal, 'user:read');
    expect(countSuccess).toHaveBeenCalledTimes(1);
  });

  it('should only check the ability of a request authenticated before routing', async () => {
    const { guard, authenticate, assertAbility } = await build();
    const early = { tokenId: 7 };
    await expect(guard.canActivate(contextFor('guarded', early))).resolves.toBe(true);
    expect(authenticate).not.toHaveBeenCalled();
    expect(assertAbility).toHaveBeenCalledWith(early, 'user:read');
  });

  it('should refuse, and count the refusal, when the token lacks the ability', async () => {
    const { guard, assertAbility, countRefusal, countSuccess } = await build();
    const missing = new Error('insufficient scope');
    assertAbility.mockImplementation(() => {
      throw missing;
    });
    await expect(guard.canActivate(contextFor('guarded'))).rejects.toBe(missing);
    expect(countRefusal).toHaveBeenCalledWith(missing);
    expect(countSuccess).not.toHaveBeenCalled();
  });

  it('should refuse a route that declares no policy', async () => {
    const { guard } = await build();
    await expect(guard.canActivate(contextFor('undecided'))).rejects.toBeInstanceOf(
      MissingAuthPolicyError,
    );
  });
});
