import type { Ability } from '../common/auth/abilities.js';
import type { PersonalAccessToken } from './personal-access-token.entity.js';
import { TOKEN_PREFIX } from './token-format.js';

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
  expired: boolean;
}

export function toTokenView(token: PersonalAccessToken, now = new Date()): TokenView {
  return {
    id: token.id,
    name: token.name,
    abilities: token.abilities,
    hint: `${TOKEN_PREFIX}…${token.lastFour}`,
    createdAt: token.createdAt,
    lastUsedAt: token.lastUsedAt,
    expiresAt: token.expiresAt,
    revokedAt: token.revokedAt,
    expired: token.expiresAt !== null && token.expiresAt <= now,
  };
}
