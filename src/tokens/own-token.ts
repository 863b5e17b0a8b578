import type { PersonalAccessToken } from './personal-access-token.entity.js';
import { describeRefusal, teamRefusalOf } from './team-policy.js';
import type { TokenView } from './token.view.js';
import type { Governance, GoverningTeam } from './tokens.repository.js';

/** One of the person's tokens with the team it acts in, and that team's refusal of it. */
export interface OwnTokenView extends TokenView {
  binding: 'current' | 'pinned';
  /** The team it acts in now (its pinned team, or the current team); null when none. */
  teamName: string | null;
  /** Why that team refuses it, in words; null when it does not. */
  refusal: string | null;
}

/** One of the person's tokens, with what decides the team it acts in. */
export interface OwnToken {
  token: PersonalAccessToken;
  governance: Governance;
}

/** The team the token acts in: the one it is pinned to, or its person's current team. */
export function actingTeamOf(tokenId: number, governance: Governance): GoverningTeam | null {
  return governance.pins.has(tokenId) ? governance.pins.get(tokenId)! : governance.currentTeam;
}

/** The token's view with the team it acts in and that team's refusal of it, in words. */
export function withTeam(
  view: TokenView,
  token: PersonalAccessToken,
  governance: Governance,
): OwnTokenView {
  const binding = governance.pins.has(token.id) ? 'pinned' : 'current';
  const team = actingTeamOf(token.id, governance);
  const code = teamRefusalOf({
    binding,
    lifetimeDays: token.lifetimeDays,
    team,
    user: { twoFactor: governance.twoFactor },
  });
  return {
    ...view,
    binding,
    teamName: team?.name ?? null,
    refusal: code && describeRefusal(code, team),
  };
}
