import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import type { User } from '../users/user.entity.js';

/**
 * The person signed in through the page's session, as the page context found them (a snapshot
 * of their row taken once per request), kept beside the request rather than declared onto it.
 */
const signedIn = new WeakMap<IncomingMessage, User>();

export function signedInUserOf(req: IncomingMessage): User | undefined {
  return signedIn.get(req);
}

export function setSignedInUser(req: IncomingMessage, user: User): void {
  signedIn.set(req, user);
}

/** The person signed in through the browser session (the route must be @SignedIn()). */
export const SignedInUser = createParamDecorator((_: unknown, ctx: ExecutionContext): User => {
  const user = signedInUserOf(ctx.switchToHttp().getRequest<IncomingMessage>());
  if (!user) {
    throw new Error('No signed-in user on the request: is the route behind @SignedIn()?');
  }
  return user;
});
