import { SetMetadata } from '@nestjs/common';
import type { Ability } from '../tokens/abilities.js';

export const AUTH_POLICY = 'tessera:auth-policy';

export type AuthPolicy = { kind: 'public' } | { kind: 'bearer'; ability: Ability };

/** The route needs no authentication. Every route must say how it is authenticated. */
export const Public = () => SetMetadata(AUTH_POLICY, { kind: 'public' } satisfies AuthPolicy);

/** The route needs a bearer token with this ability. */
export const BearerAuth = (ability: Ability) =>
  SetMetadata(AUTH_POLICY, { kind: 'bearer', ability } satisfies AuthPolicy);
