import { describe, expect, it, jest } from '@jest/globals';
import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Metrics } from '../metrics/metrics.js';
import { InsufficientScopeError } from './auth.errors.js';
import { AccessGuard, MissingAuthPolicyError } from './access.guard.js';
import { BearerAuth, Public, SignedIn } from '../common/auth-policy.decorator.js';
import { SignInRequiredError } from './auth.errors.js';

class Routes {
  @Public() open(): void {}
  @SignedIn() page(): void {}
  @BearerAuth('user:read') guarded(): void {}
  @BearerAuth() anyToken(): void {}
  undecided(): void {}
}

function contextFor(handler: keyof Routes, request: object = {}): ExecutionContext {
  return {
    getHandler: () => Routes.prototype[handler],
    getClass: () => Routes,
    switchToHttp: () => ({ getRequest: () => request }),
  } as unknown as ExecutionContext;
}

describe('AccessGuard', () => {
  function build() {
    const metrics = { authentication: jest.fn() };
    return { guard: new AccessGuard(new Reflector(), metrics as unknown as Metrics), metrics };
  }

  it('should let a public route through whatever the request carries', () => {
    expect(build().guard.canActivate(contextFor('open'))).toBe(true);
  });

  it('should refuse a page that needs a person to a visitor', () => {
    expect(() => build().guard.canActivate(contextFor('page'))).toThrow(SignInRequiredError);
    expect(build().guard.canActivate(contextFor('page', { currentUser: { id: 1 } }))).toBe(true);
  });

  it("should let a token with the route's ability through, and count the success", () => {
    const { guard, metrics } = build();
    const user = { abilities: ['user:read'] };
    expect(guard.canActivate(contextFor('guarded', { user }))).toBe(true);
    expect(metrics.authentication).toHaveBeenCalledWith('success');
  });

  it('should refuse a token without the ability, and count the refusal by its code', () => {
    const { guard, metrics } = build();
    const user = { abilities: ['team:read'] };
    expect(() => guard.canActivate(contextFor('guarded', { user }))).toThrow(
      InsufficientScopeError,
    );
    expect(metrics.authentication).toHaveBeenCalledWith('insufficient_scope');
    expect(guard.canActivate(contextFor('anyToken', { user }))).toBe(true);
  });

  it('should refuse a bearer route whose token nothing read, rather than let it through', () => {
    expect(() => build().guard.canActivate(contextFor('guarded'))).toThrow(
      /nothing read its token/,
    );
  });

  it('should refuse a route that declares no policy', () => {
    expect(() => build().guard.canActivate(contextFor('undecided'))).toThrow(
      MissingAuthPolicyError,
    );
  });
});
