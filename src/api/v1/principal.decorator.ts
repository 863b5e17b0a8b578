import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { TeamNotFoundError } from '../../teams/teams.errors.js';
import type { TokenPrincipal } from '../../tokens/tokens.service.js';

function principalOf(ctx: ExecutionContext): TokenPrincipal {
  const principal = ctx.switchToHttp().getRequest<Request>().user as TokenPrincipal | undefined;
  if (!principal)
    throw new Error('No principal on the request: is the route behind @BearerAuth()?');
  return principal;
}

/** The user the presented token acts for. */
export const CurrentUser = createParamDecorator(
  (_: unknown, ctx: ExecutionContext) => principalOf(ctx).user,
);

/** The current team of the token's user, as it was when this request was authenticated. */
export const CurrentTeam = createParamDecorator((_: unknown, ctx: ExecutionContext) => {
  const team = principalOf(ctx).team;
  if (!team) throw new TeamNotFoundError();
  return team;
});

/** The presented token itself, as it was when this request was authenticated. */
export const CurrentToken = createParamDecorator((_: unknown, ctx: ExecutionContext) =>
  principalOf(ctx),
);
