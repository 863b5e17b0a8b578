import { describe, expect, it } from '@jest/globals';
import type { Request } from 'express';
import { actorOf, sessionHandle, signedInActor } from './current-actor.js';

const request = (fields: object = {}) =>
  ({
    ip: '203.0.113.9',
    headers: { 'user-agent': 'curl/8.5.0' },
    sessionID: 'the-session-id',
    ...fields,
  }) as unknown as Request;
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

  it("should make the signed-in person the actor, in their session's handle", () => {
    const req = request({ currentUser: { id: 7 } });
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
    (req as { currentUser?: object }).currentUser = { id: 7 };
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
