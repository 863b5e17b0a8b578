import { describe, expect, it, jest } from '@jest/globals';
import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { BearerAuth, Public, SignedIn } from '../common/auth-policy.decorator.js';
import type { Metrics } from '../metrics/metrics.js';
import { InsufficientScopeError, SignInRequiredError } from '../auth/auth.errors.js';
import type { User } from '../users/user.entity.js';
import { AccessGuard, actorOf, MissingAuthPolicyError, signedInActor } from './access.js';
import { bearerRefusal } from '../auth/bearer-refusal.js';
import { sessionHandle } from '../auth/session-digests.js';
import { setActor } from './request-state.js';

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
  const req = signedIn(request as Request, currentUser);
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

const request = ({ currentUser, ...fields }: { currentUser?: object; user?: object } = {}) =>
  signedIn(
    {
      ip: '203.0.113.9',
      headers: { 'user-agent': 'curl/8.5.0' },
      sessionID: 'the-session-id',
      ...fields,
    } as unknown as Request,
    currentUser,
  );
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

describe('bearerRefusal', () => {
  const teamRefusal = { code: 'two_factor_required' } as never;
  const token = (overrides: object = {}) => ({
    abilities: ['team:read'],
    teamRefusal: null,
    team: { policy: { allowedAbilities: ['user:read'] } },
    ...overrides,
  });

  it("should refuse in the API's order: the team's refusal, a missing ability, one the team does not allow", () => {
    expect(bearerRefusal(token({ teamRefusal }), 'user:read')).toBe(teamRefusal);
    expect(bearerRefusal(token(), 'user:read')?.code).toBe('insufficient_scope');
    expect(bearerRefusal(token(), 'team:read')?.code).toBe('ability_not_allowed_by_team');
    expect(bearerRefusal(token({ team: null }), 'team:read')).toBeNull();
    expect(bearerRefusal(token({ teamRefusal }), undefined)).toBe(teamRefusal);
  });

  it('should leave the team out of what does not act in it (GET /api/v1/token)', () => {
    expect(bearerRefusal(token({ teamRefusal }), 'team:read', false)).toBeNull();
    expect(bearerRefusal(token(), 'user:read', false)?.code).toBe('insufficient_scope');
  });
});
