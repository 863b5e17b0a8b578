import type { TeamPolicy } from './tokens.repository.js';

const DAY_MS = 86_400_000;

/** Why a team refuses a token that is otherwise good: the API's 403 codes. */
export type TeamRefusalCode =
  'team_access_lost' | 'two_factor_required' | 'token_lifetime_exceeds_policy';

/** What the team refusal of a token depends on. */
export interface GovernedToken {
  binding: 'current' | 'pinned';
  createdAt: Date;
  regeneratedAt: Date | null;
  expiresAt: Date | null;
  /** The team it acts in, while its person is a member of it. */
  team: { name: string; policy: TeamPolicy } | null;
  user: { twoFactor: boolean };
}

/** How long the token's current value lives: from creation or last regeneration to expiry. */
export function lifetimeMs(
  token: Pick<GovernedToken, 'createdAt' | 'regeneratedAt' | 'expiresAt'>,
): number {
  if (!token.expiresAt) return Infinity;
  return token.expiresAt.getTime() - (token.regeneratedAt ?? token.createdAt).getTime();
}

/** Whether a lifetime is longer than the policy's maximum (a lifetime without end always is). */
export function exceedsMaxLifetime(lifetime: number, maxDays: number | null): boolean {
  return maxDays !== null && lifetime > maxDays * DAY_MS;
}

/**
 * Whether the team the token acts in refuses it, and why; null when it may act. A pinned
 * token whose person is no longer in its team (or whose team is gone) has lost its access; a
 * token following its person's current team is governed by that team, whichever it is now.
 */
export function teamRefusalOf(token: GovernedToken): TeamRefusalCode | null {
  if (!token.team) return token.binding === 'pinned' ? 'team_access_lost' : null;
  const { policy } = token.team;
  if (policy.requireTwoFactor && !token.user.twoFactor) return 'two_factor_required';
  if (exceedsMaxLifetime(lifetimeMs(token), policy.tokenMaxLifetimeDays))
    return 'token_lifetime_exceeds_policy';
  return null;
}

/**
 * A refusal in words: to the token's person (`own`, the token pages) or to the team's owners
 * and admins (`team`, its inventory).
 */
export function describeRefusal(
  code: TeamRefusalCode,
  team: { name: string; policy: TeamPolicy } | null,
  viewer: 'own' | 'team' = 'own',
): string {
  const own = viewer === 'own';
  switch (code) {
    case 'team_access_lost':
      return own
        ? 'It is pinned to a team you are no longer in: the API refuses it.'
        : 'Its person is no longer in the team it is pinned to.';
    case 'two_factor_required':
      return own
        ? `${team!.name} requires two-factor sign-in: the API refuses this token there until you turn it on.`
        : 'Refused here: its person has not turned on two-factor sign-in.';
    case 'token_lifetime_exceeds_policy':
      return own
        ? `${team!.name} allows tokens of at most ${team!.policy.tokenMaxLifetimeDays} days: the API refuses this one there. Regenerate it with a shorter lifetime.`
        : `Refused here: it lives longer than ${team!.policy.tokenMaxLifetimeDays} days.`;
  }
}
