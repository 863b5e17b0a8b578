/** What a token may read: `user:read` for the profile, `team:read` for the current team. */
export const ABILITIES = ['user:read', 'team:read'] as const;
export type Ability = (typeof ABILITIES)[number];
