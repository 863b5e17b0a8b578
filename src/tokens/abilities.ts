/** What a token may read: `user:read` for the profile, `team:read` for the current team. */
export const ABILITIES = ['user:read', 'team:read'] as const;
export type Ability = (typeof ABILITIES)[number];

/** What each ability lets a token do, in a line, for the pages. */
export const ABILITY_DESCRIPTIONS: Record<Ability, string> = {
  'user:read': 'Read your profile (name and email): GET /api/v1/user/profile.',
  'team:read': 'Read your current team (name and slug): GET /api/v1/team.',
};
