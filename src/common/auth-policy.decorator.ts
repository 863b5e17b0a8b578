import { SetMetadata } from '@nestjs/common';

export const AUTH_POLICY = 'tessera:auth-policy';

export type AuthPolicy =
  | { kind: 'public' }
  | { kind: 'bearer'; ability?: string; actsInTeam?: boolean }
  | { kind: 'session' }
  | { kind: 'guest' };

/** The route needs no authentication. Every route must say how it is authenticated. */
export const Public = () => SetMetadata(AUTH_POLICY, { kind: 'public' } satisfies AuthPolicy);

/**
 * The route needs a bearer token, with this ability (one the token grants) when one is named.
 * A route acts in the token's team unless it says otherwise (`actsInTeam: false`: the token
 * describing itself), and is refused when that team refuses the token.
 */
export const BearerAuth = (ability?: string, actsInTeam = true) =>
  SetMetadata(AUTH_POLICY, { kind: 'bearer', ability, actsInTeam } satisfies AuthPolicy);

/** The page needs a person signed in through the browser session. */
export const SignedIn = () => SetMetadata(AUTH_POLICY, { kind: 'session' } satisfies AuthPolicy);

/** A page for visitors who are not signed in (sign-in, sign-up): the signed-in go to the dashboard. */
export const GuestOnly = () => SetMetadata(AUTH_POLICY, { kind: 'guest' } satisfies AuthPolicy);
