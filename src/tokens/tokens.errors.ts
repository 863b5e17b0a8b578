import { ConflictError, DomainError, NotFoundError } from '../common/errors/domain.error.js';
import type { TeamRefusalCode } from './team-policy.js';

export type AuthFailureCode =
  'missing_token' | 'invalid_token' | 'token_revoked' | 'token_expired' | 'account_disabled';

const MESSAGES: Record<AuthFailureCode, string> = {
  missing_token: 'No bearer token was sent. Send "Authorization: Bearer <token>".',
  invalid_token: 'The bearer token is malformed or unknown.',
  token_revoked: 'The bearer token has been revoked.',
  token_expired: 'The bearer token has expired.',
  account_disabled:
    "The bearer token's account is disabled: its tokens are refused until an operator enables it again.",
};

/** Said with `token_revoked` for a value that regenerating the token replaced. */
export const REPLACED_VALUE_MESSAGE =
  'This value of the bearer token was replaced when the token was regenerated; use the new value.';

/** A known token refused (revoked, replaced or expired): which one, for its security log. */
export interface RefusedToken {
  tokenId: number;
  userId: number;
}

/** The request could not be authenticated; `code` says why. */
export class AuthenticationError extends DomainError {
  constructor(
    readonly code: AuthFailureCode,
    message = MESSAGES[code],
    /** Set when the token is known: never sent to the client. */
    readonly refused?: RefusedToken,
  ) {
    super(message);
  }
}

/** Registered HTTP authentication schemes, named back when sent instead of Bearer. */
const KNOWN_SCHEMES = new Set([
  'basic',
  'digest',
  'token',
  'negotiate',
  'ntlm',
  'hoba',
  'mutual',
  'dpop',
  'oauth',
  'vapid',
]);

/**
 * Why an Authorization header gave no bearer token, in words: built only when the request is
 * refused (the authentication's fast path never calls it). Never echoes the header's value: a
 * scheme is named back only when it is one of the registered ones.
 */
export function headerRefusal(header: string | undefined, malformed: boolean): AuthenticationError {
  const parts = header?.trim().split(/\s+/).filter(Boolean) ?? [];
  if (parts.length === 0) return new AuthenticationError('missing_token');
  const bearer = /^bearer$/i.test(parts[0]);
  if (parts.length === 1) {
    return new AuthenticationError(
      'invalid_token',
      bearer
        ? 'The Authorization header says Bearer but carries no token. Send "Authorization: Bearer <token>".'
        : 'The Authorization header has no scheme: the token goes after "Bearer ". Send "Authorization: Bearer <token>".',
    );
  }
  if (!bearer) {
    const scheme = KNOWN_SCHEMES.has(parts[0].toLowerCase())
      ? `the ${parts[0]} scheme`
      : 'a scheme other than Bearer';
    return new AuthenticationError(
      'missing_token',
      `The Authorization header uses ${scheme}; this API takes only bearer tokens. Send "Authorization: Bearer <token>".`,
    );
  }
  return new AuthenticationError(malformed ? 'invalid_token' : 'missing_token');
}

export class TokenNotFoundError extends NotFoundError {
  constructor() {
    super('token');
  }
}

export class AmbiguousTokenNameError extends DomainError {
  readonly code = 'ambiguous_token_name';
  constructor(name: string, ids: number[]) {
    super(
      `${ids.length} active tokens are named "${name}" (ids ${ids.join(', ')}); choose one by id.`,
    );
  }
}

/** A revoked token stays revoked: it is neither renamed nor given a new value. */
export class TokenRevokedError extends ConflictError {
  constructor() {
    super('token_revoked', 'This token was revoked and cannot be changed; create a new one.');
  }
}

/** Another regeneration replaced the value first; nothing was changed by this one. */
export class TokenChangedError extends ConflictError {
  constructor() {
    super(
      'token_changed',
      'The token was regenerated at the same moment elsewhere; look at it again before retrying.',
    );
  }
}

/**
 * Each refusal in words, naming the team when the token may know it (`team:read`, as
 * `GET /api/v1/token` names it); otherwise "the team this token acts in".
 */
const TEAM_REFUSALS: Record<TeamRefusalCode, (team: string | undefined) => string> = {
  team_access_lost: () =>
    'The token is pinned to a team its person is no longer a member of, or that was deleted.',
  two_factor_required: (team) =>
    team === undefined
      ? "The team this token acts in requires two-factor sign-in, which the token's person has not turned on."
      : `The team ${team} requires two-factor sign-in, which the token's person has not turned on: they turn it on under Security, and the token works in ${team} again.`,
  token_lifetime_exceeds_policy: (team) =>
    `The token lives longer than ${team === undefined ? 'the team it acts in' : `the team ${team}`} allows; regenerate it with a shorter lifetime.`,
};

/**
 * A good token that the team it acts in refuses (its policy, or a pinned team its person left):
 * answered as a missing ability is. Made only for a refused token.
 */
export class TeamRefusalError extends DomainError {
  constructor(
    readonly code: TeamRefusalCode,
    /** The name of the team that refuses it, when the token may know it. */
    teamName?: string,
  ) {
    super(TEAM_REFUSALS[code](teamName === undefined ? undefined : JSON.stringify(teamName)));
  }
}
