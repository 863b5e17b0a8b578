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
