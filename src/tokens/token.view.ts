import type { Ability } from './abilities.js';
import type { AbilityCatalog } from '../config/abilities.config.js';
import type { PersonalAccessToken } from './personal-access-token.entity.js';
import { describeRefusal, teamRefusalOf } from './team-policy.js';
import { TOKEN_PREFIX } from './token-format.js';
import type { Governance, GoverningTeam } from './tokens.repository.js';
import { toTeamSummary, type TeamSummary } from '../teams/team.view.js';

/** A token that works, or why it no longer does. */
export type TokenStatus = 'active' | 'expired' | 'revoked';

/** What anyone may see of a stored token: never its hash. */
export interface TokenView {
  id: number;
  name: string;
  abilities: Ability[];
  /** `tsr_…` and the last four characters, so people can tell their tokens apart. */
  hint: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
  regeneratedAt: Date | null;
  expired: boolean;
  status: TokenStatus;
  /** When it stopped working: revoked, or expired; null while active. */
  endedAt: Date | null;
  /** Which value this is (when it was made), so a form can ask to replace this value only. */
  version: number;
}

/** The token's value's version: when it was made, by creation or the last regeneration. */
export function valueVersionOf(
  token: Pick<PersonalAccessToken, 'createdAt' | 'regeneratedAt'>,
): number {
  return (token.regeneratedAt ?? token.createdAt).getTime();
}

export function toTokenView(token: PersonalAccessToken, now: Date): TokenView {
  const expired = token.expiresAt !== null && token.expiresAt <= now;
  const status: TokenStatus = token.revokedAt ? 'revoked' : expired ? 'expired' : 'active';
  return {
    id: token.id,
    name: token.name,
    abilities: token.abilities,
    hint: `${TOKEN_PREFIX}…${token.lastFour}`,
    createdAt: token.createdAt,
    lastUsedAt: token.lastUsedAt,
    expiresAt: token.expiresAt,
    revokedAt: token.revokedAt,
    regeneratedAt: token.regeneratedAt,
    expired,
    status,
    endedAt: token.revokedAt ?? (expired ? token.expiresAt : null),
    version: valueVersionOf(token),
  };
}

/** The presented token as the API describes it to its holder (`GET /api/v1/token`). */
export interface TokenInfo {
  id: number;
  name: string;
  /** What it may do: the abilities it holds that the catalog offers. */
  abilities: Ability[];
  /** Abilities it holds that the catalog no longer offers: they grant nothing. */
  abilities_no_longer_offered: Ability[];
  /** Every ability this deployment offers, with what it allows. */
  catalog: { name: Ability; description: string }[];
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  binding: 'current' | 'pinned';
  team: TeamSummary | null;
  team_refusal: string | null;
  /**
   * Set when the presented value is the one a regeneration replaced, accepted only during its
   * grace period: until when it works. Null for the token's current value.
   */
  replaced_value_valid_until: string | null;
}

/**
 * The team is named only to a token that may read it (`team:read`) and that the team does not
 * refuse: a token that may not ask `GET /api/v1/team` learns nothing of the team from here.
 */
export function toTokenInfo(
  token: {
    tokenId: number;
    tokenName: string;
    abilities: Ability[];
    createdAt: Date;
    expiresAt: Date | null;
    lastUsedAt: Date | null;
    binding: 'current' | 'pinned';
    team: TeamSummary | null;
    teamRefusal: { code: string } | null;
    previousValue: boolean;
    previousValidUntil: Date | null;
  },
  catalog: AbilityCatalog,
): TokenInfo {
  return {
    id: token.tokenId,
    name: token.tokenName,
    abilities: catalog.offered(token.abilities),
    abilities_no_longer_offered: catalog.retired(token.abilities),
    catalog: catalog.entries.map(({ name, description }) => ({ name, description })),
    created_at: token.createdAt.toISOString(),
    expires_at: token.expiresAt?.toISOString() ?? null,
    last_used_at: token.lastUsedAt?.toISOString() ?? null,
    binding: token.binding,
    team:
      token.team && token.abilities.includes('team:read') && !token.teamRefusal
        ? toTeamSummary(token.team)
        : null,
    team_refusal: token.teamRefusal?.code ?? null,
    replaced_value_valid_until:
      token.previousValue && token.previousValidUntil
        ? token.previousValidUntil.toISOString()
        : null,
  };
}

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
