import { DomainError, NotFoundError } from '../common/errors/domain.error.js';
import type { Ability } from './abilities.js';

export type AuthFailureCode = 'missing_token' | 'invalid_token' | 'token_revoked' | 'token_expired';

const MESSAGES: Record<AuthFailureCode, string> = {
  missing_token: 'No bearer token was sent. Send "Authorization: Bearer <token>".',
  invalid_token: 'The bearer token is malformed or unknown.',
  token_revoked: 'The bearer token has been revoked.',
  token_expired: 'The bearer token has expired.',
};

/** The request could not be authenticated; `code` says why. */
export class AuthenticationError extends DomainError {
  constructor(readonly code: AuthFailureCode) {
    super(MESSAGES[code]);
  }
}

export class InsufficientScopeError extends DomainError {
  readonly code = 'insufficient_scope';
  constructor(readonly scope: Ability) {
    super(`The token lacks the "${scope}" ability this endpoint needs.`);
  }
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
