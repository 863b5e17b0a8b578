import type { AbilityCatalog } from '../config/abilities.config.js';
import { teamRefusalOf, type TeamRefusalCode } from './team-policy.js';
import type { GoverningTeam, TeamPolicy, TeamToken } from './tokens.repository.js';

/** A token acting in a team, and what a new policy of the team would take from it. */
export interface TokenImpact {
  token: Pick<TeamToken, 'id' | 'name' | 'pinned' | 'person' | 'abilities'>;
  /** The API's code it would be refused with everywhere in the team; null when it would not. */
  refusal: TeamRefusalCode | null;
  /** Abilities it holds and may use now, that the new policy would not allow it. */
  lostAbilities: string[];
}

/** Whom a change would reach: the tokens it refuses or limits, and their people. */
export interface PolicyImpact {
  tokens: TokenImpact[];
  /** Their people (and service accounts), once each, by name. */
  people: { id: number; name: string; email: string; serviceAccount: boolean }[];
}

/**
 * What a new policy of `team` would do to the tokens acting in it now, by the rules the API
 * applies (teamRefusalOf): those it would refuse that are not refused today, and those that
 * would lose abilities they may use today. Tokens already refused are left out: the change
 * breaks nothing more for them.
 */
export function policyImpact(
  team: GoverningTeam,
  proposed: TeamPolicy,
  tokens: readonly TeamToken[],
  catalog: AbilityCatalog,
): PolicyImpact {
  const after = { ...team, policy: proposed };
  const usable = (policy: TeamPolicy, ability: string) =>
    !policy.allowedAbilities || policy.allowedAbilities.includes(ability);
  const impacts: TokenImpact[] = [];
  for (const token of tokens) {
    const governed = {
      binding: token.pinned ? ('pinned' as const) : ('current' as const),
      lifetimeDays: token.lifetimeDays,
      user: token.person,
    };
    if (teamRefusalOf({ ...governed, team }) !== null) continue;
    const refusal = teamRefusalOf({ ...governed, team: after });
    const offered = catalog.offered(token.abilities);
    // A service account's token never could use the abilities only a member can use.
    const unusable = token.person.serviceAccount ? catalog.membersOnly(offered) : [];
    const lostAbilities = offered.filter(
      (a) => !unusable.includes(a) && usable(team.policy, a) && !usable(proposed, a),
    );
    if (refusal === null && lostAbilities.length === 0) continue;
    const { id, name, pinned, person, abilities } = token;
    impacts.push({ token: { id, name, pinned, person, abilities }, refusal, lostAbilities });
  }
  const people = new Map(
    impacts.map(({ token: { person } }) => [
      person.id,
      {
        id: person.id,
        name: person.name,
        email: person.email,
        serviceAccount: person.serviceAccount,
      },
    ]),
  );
  return {
    tokens: impacts,
    people: [...people.values()].sort((x, y) => x.name.localeCompare(y.name) || x.id - y.id),
  };
}

/** What a change does to a token, and what whoever answers for it can do, in words. */
export interface ImpactInWords {
  change: string;
  todo: string;
}

export function impactInWords(
  { token, refusal, lostAbilities }: TokenImpact,
  team: string,
  policy: TeamPolicy,
): ImpactInWords {
  const max = policy.tokenMaxLifetimeDays;
  if (refusal === 'two_factor_required') {
    return {
      change: `refused in ${team} from now on: the team requires two-factor sign-in`,
      todo: 'Turn two-factor sign-in on (Account Settings, Security): the token works again at once.',
    };
  }
  if (refusal === 'token_lifetime_exceeds_policy') {
    return {
      change: `refused in ${team} from now on: it lives longer than the team's maximum of ${max} days`,
      todo: token.person.serviceAccount
        ? `Give the service account a new token of at most ${max} days on its page, and replace this one.`
        : `Regenerate it with a lifetime of at most ${max} days on its page.`,
    };
  }
  if (refusal === 'team_access_lost') {
    return { change: `refused in ${team} from now on`, todo: 'Create a new token.' };
  }
  const them = lostAbilities.length === 1 ? 'it' : 'them';
  return {
    change: `can no longer use ${lostAbilities.join(', ')} in ${team}: the team no longer allows ${them}`,
    todo: "Ask the team's owner if it needs them; its other abilities keep working.",
  };
}
