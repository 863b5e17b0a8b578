import type { User } from './user.entity.js';

/** The public profile: exactly these three fields, never the password hash. */
export interface UserProfile {
  id: number;
  name: string;
  email: string;
}

export function toUserProfile(user: Pick<User, 'id' | 'name' | 'email'>): UserProfile {
  return { id: user.id, name: user.name, email: user.email };
}

/** Who an account is: a person, or a team's service account. */
export type AccountType = 'person' | 'service_account';

/** The profile the API answers: the public fields, and whether it is a person's. */
export interface AccountProfile extends UserProfile {
  type: AccountType;
}

export function toAccountProfile(
  user: Pick<User, 'id' | 'name' | 'email'> & { serviceAccount: boolean },
): AccountProfile {
  return { ...toUserProfile(user), type: user.serviceAccount ? 'service_account' : 'person' };
}
