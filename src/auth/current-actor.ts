import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { createHash } from 'node:crypto';
import type { Actor, Client, PersonActor } from '../common/actor.js';

/** The name a session goes by in the sessions page, its forms and the security log. */
export function sessionHandle(sessionId: string): string {
  return createHash('sha256').update(`tessera-session-handle:${sessionId}`).digest('base64url');
}

/** What a token's authentication leaves on the request (`req.user`), as far as acting goes. */
interface TokenCredential {
  tokenId: number;
  abilities: readonly string[];
  user: { id: number };
}

function clientOf(req: Request): Client {
  return { ip: req.ip ?? null, userAgent: req.headers['user-agent'] ?? null };
}

/**
 * Who acts in this request, built once and kept on it: the token the API's middleware accepted,
 * the person signed in to the page's session, or a visitor.
 */
export function actorOf(req: Request): Actor {
  if (req.actor) return req.actor;
  const token = req.user as TokenCredential | undefined;
  const actor: Actor = token
    ? {
        kind: 'token',
        userId: token.user.id,
        tokenId: token.tokenId,
        abilities: token.abilities,
        client: clientOf(req),
      }
    : req.currentUser
      ? signedInActor(req, req.currentUser.id)
      : { kind: 'visitor', client: clientOf(req) };
  req.actor = actor;
  return actor;
}

/**
 * The person who has just signed in to this request's session (which `actorOf` may have seen as
 * a visitor's): the request acts for them from here on.
 */
export function signedInActor(req: Request, userId: number): PersonActor {
  const actor: PersonActor = {
    kind: 'person',
    userId,
    session: req.sessionID ? sessionHandle(req.sessionID) : null,
    client: clientOf(req),
  };
  req.actor = actor;
  return actor;
}

/** Who acts in the request: the one way controllers learn it. */
export const CurrentActor = createParamDecorator((_: unknown, ctx: ExecutionContext): Actor =>
  actorOf(ctx.switchToHttp().getRequest<Request>()),
);
