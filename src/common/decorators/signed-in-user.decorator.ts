import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';

/** The person signed in through the browser session (the route must be @SignedIn()). */
export const SignedInUser = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): NonNullable<Request['currentUser']> => {
    const user = ctx.switchToHttp().getRequest<Request>().currentUser;
    if (!user) {
      throw new Error('No signed-in user on the request: is the route behind @SignedIn()?');
    }
    return user;
  },
);
