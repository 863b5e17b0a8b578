import type { DomainError } from '../common/errors/domain.error.js';
import { AbilityNotAllowedByTeamError, InsufficientScopeError } from './auth.errors.js';

/** What deciding a token's access needs of it: its abilities, its team's refusal and policy. */
export interface BearerPrincipal {
  abilities: readonly string[];
  teamRefusal?: DomainError | null;
  team?: { policy: { allowedAbilities: readonly string[] | null } } | null;
}

/**
 * Why the token may not do what needs `ability` (none: anything a valid token may), or null
 * when it may: for what acts in its team, that team's refusal of it (its policy, a pinned team
 * left); then an ability it lacks (`insufficient_scope`); then, acting in its team, an ability
 * the team's policy does not allow. The one decision the API's guard and introspection share.
 */
export function bearerRefusal(
  principal: BearerPrincipal,
  ability: string | undefined,
  actsInTeam = true,
): DomainError | null {
  if (actsInTeam && principal.teamRefusal) return principal.teamRefusal;
  if (ability && !principal.abilities.includes(ability)) return new InsufficientScopeError(ability);
  const allowed = actsInTeam ? principal.team?.policy.allowedAbilities : null;
  if (ability && allowed && !allowed.includes(ability)) {
    return new AbilityNotAllowedByTeamError(ability);
  }
  return null;
}
