/** What a token may read: `user:read` for the profile, `team:read` for the current team. */
export const ABILITIES = ['user:read', 'team:read'] as const;
export type Ability = (typeof ABILITIES)[number];

export function isAbility(value: string): value is Ability {
  return (ABILITIES as readonly string[]).includes(value);
}
