import type { TeamPolicy } from './tokens.repository.js';

/** Why a team refuses a token that is otherwise good: the API's 403 codes. */
export type TeamRefusalCode =
  'team_access_lost' | 'two_factor_required' | 'token_lifetime_exceeds_policy';

/** What the team refusal of a token depends on. */
export interface GovernedToken {
  binding: 'current' | 'pinned';
  /**
   * The lifetime chosen for its current value, in whole days (when it was made or last
   * regenerated); null when it never expires.
   */
  lifetimeDays: number | null;
  /** The team it acts in, while its person is a member of it. */
  team: { name: string; policy: TeamPolicy } | null;
  /** A service account signs in nowhere: a team's two-factor requirement is not its to meet. */
  user: { twoFactor: boolean; serviceAccount?: boolean };
}

/**
 * Whether a lifetime of `days` whole days (null: it never expires) is longer than a maximum of
 * `maxDays`. What the person chose is compared, never two stored times: a token made for exactly
 * the maximum is within it. The API's refusal and the forms' (token-lifetimes.ts) both ask this.
 */
export function exceedsMaxLifetime(days: number | null, maxDays: number | null): boolean {
  return maxDays !== null && (days === null || days > maxDays);
}

/**
 * Whether the team the token acts in refuses it, and why; null when it may act. A pinned
 * token whose person is no longer in its team (or whose team is gone) has lost its access; a
 * token following its person's current team is governed by that team, whichever it is now.
 */
export function teamRefusalOf(token: GovernedToken): TeamRefusalCode | null {
  return teamRefusalsOf(token)[0] ?? null;
}

/**
 * Every reason the team refuses the token, the API's (teamRefusalOf) first: a page lists them
 * all, so that meeting one does not reveal the next.
 */
export function teamRefusalsOf(token: GovernedToken): TeamRefusalCode[] {
  if (!token.team) return token.binding === 'pinned' ? ['team_access_lost'] : [];
  const { policy } = token.team;
  const codes: TeamRefusalCode[] = [];
  if (policy.requireTwoFactor && !token.user.twoFactor && !token.user.serviceAccount) {
    codes.push('two_factor_required');
  }
  if (exceedsMaxLifetime(token.lifetimeDays, policy.tokenMaxLifetimeDays)) {
    codes.push('token_lifetime_exceeds_policy');
  }
  return codes;
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
        ? `${team!.name} allows tokens of at most ${team!.policy.tokenMaxLifetimeDays} days: the API refuses this one there. Regenerate it with a lifetime of at most ${team!.policy.tokenMaxLifetimeDays} days.`
        : `Refused here: it lives longer than ${team!.policy.tokenMaxLifetimeDays} days.`;
  }
}
