import { describe, expect, it, jest } from '@jest/globals';
import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { BearerAuth, Public, SignedIn } from '../common/auth-policy.decorator.js';
import type { Metrics } from '../metrics/metrics.js';
import { InsufficientScopeError, SignInRequiredError } from '../auth/auth.errors.js';
import type { User } from '../users/user.entity.js';
import { AccessGuard, actorOf, MissingAuthPolicyError, signedInActor } from './access.js';
import { sessionHandle } from '../auth/session-digests.js';
import type { TokenPrincipal } from '../tokens/token-authenticator.js';
import { setActor, setToken } from './request-state.js';

class Routes {
  @Public() open(): void {}
  @SignedIn() page(): void {}
  @BearerAuth('user:read') guarded(): void {}
  @BearerAuth() anyToken(): void {}
  undecided(): void {}
}

/** The request as the page context leaves it: with the person signed in, when there is one. */
function signedIn(req: Request, user?: object): Request {
  if (user) {
    const client = { ip: null, userAgent: null };
    setActor(req, { kind: 'person', userId: (user as User).id, session: null, client });
  }
  return req;
}

function contextFor(
  handler: keyof Routes,
  { currentUser, ...request }: { currentUser?: object; user?: object } = {},
): ExecutionContext {
  const { user, ...rest } = request;
  const req = signedIn(rest as Request, currentUser);
  if (user) setToken(req, user as TokenPrincipal);
  return {
    getHandler: () => Routes.prototype[handler],
    getClass: () => Routes,
    switchToHttp: () => ({ getRequest: () => req }),
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

function request({ currentUser, user }: { currentUser?: object; user?: object } = {}): Request {
  const req = signedIn(
    {
      ip: '203.0.113.9',
      headers: { 'user-agent': 'curl/8.5.0' },
      sessionID: 'the-session-id',
    } as unknown as Request,
    currentUser,
  );
  if (user) setToken(req, user as TokenPrincipal);
  return req;
}
const client = { ip: '203.0.113.9', userAgent: 'curl/8.5.0' };

describe('actorOf', () => {
  it('should make the token the API accepted the actor, with its account and abilities', () => {
    const req = request({ user: { tokenId: 4, abilities: ['team:read'], user: { id: 7 } } });
    expect(actorOf(req)).toEqual({
      kind: 'token',
      userId: 7,
      tokenId: 4,
      abilities: ['team:read'],
      client,
    });
  });

  it("should make the person the page context found signed in the actor, in their session's handle", () => {
    const req = request();
    signedInActor(req, 7);
    expect(actorOf(req)).toEqual({
      kind: 'person',
      userId: 7,
      session: sessionHandle('the-session-id'),
      client,
    });
    // Never the session id itself, which would sign anyone in.
    expect(JSON.stringify(actorOf(req))).not.toContain('the-session-id');
  });

  it('should make anyone else a visitor, and build the actor once per request', () => {
    const req = request();
    const first = actorOf(req);
    expect(first).toEqual({ kind: 'visitor', client });
    expect(actorOf(req)).toBe(first);
  });

  it('should act for the person who has just signed in from then on', () => {
    const req = request();
    expect(actorOf(req).kind).toBe('visitor');
    const person = signedInActor(req, 7);
    expect(person).toMatchObject({ kind: 'person', userId: 7 });
    expect(actorOf(req)).toBe(person);
  });
});
