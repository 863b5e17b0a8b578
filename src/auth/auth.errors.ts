import { DomainError, type NextStep } from '../common/errors/domain.error.js';

/** The same answer for an unknown email and a wrong password, so neither can be probed. */
export class InvalidCredentialsError extends DomainError {
  readonly code = 'invalid_credentials';
  readonly status = 422;
  constructor() {
    super('These credentials do not match our records.');
  }
}

/**
 * An operator disabled the account (`user:disable`). Said only once the password (or passkey,
 * or second factor) was right, so it tells nothing to someone guessing.
 */
export class AccountDisabledError extends DomainError {
  readonly code = 'account_disabled';
  readonly status = 403;
  constructor() {
    super(
      'This account is disabled: it cannot sign in until an operator enables it again. Ask whoever runs Tessera for you.',
    );
  }
}

export class SignInRequiredError extends DomainError {
  readonly code = 'sign_in_required';
  readonly status = 401;
  constructor() {
    super('Please sign in to continue.');
  }
}

/**
 * A request a browser says came from another site (or would not say where from), where only
 * Tessera's own pages may lead. `message` says what was not done and what to do instead.
 */
export class CrossSiteRequestError extends DomainError {
  readonly code = 'cross_site_request';
  readonly status = 403;
  override readonly nextStep?: NextStep;
  constructor(message: string, nextStep?: NextStep) {
    super(message);
    this.nextStep = nextStep;
  }
}

export class AlreadySignedInError extends DomainError {
  readonly code = 'already_signed_in';
  readonly status = 409;
  constructor() {
    super('You are already signed in.');
  }
}

/** The realm of the API's bearer challenges. */
export const BEARER_REALM = 'tessera';

/** A token without the ability a route needs (RFC 6750's `insufficient_scope`). */
export class InsufficientScopeError extends DomainError {
  readonly code = 'insufficient_scope';
  readonly status = 403;
  override readonly challenge: string;
  constructor(readonly scope: string) {
    super(`The token lacks the "${scope}" ability this endpoint needs.`);
    this.challenge = `Bearer realm="${BEARER_REALM}", error="insufficient_scope", scope="${scope}"`;
  }
}

/**
 * A token holding the ability a route needs, acting in a team whose policy does not allow that
 * ability to tokens: 403, naming the ability.
 */
export class AbilityNotAllowedByTeamError extends DomainError {
  readonly code = 'ability_not_allowed_by_team';
  readonly status = 403;
  override readonly challenge: string;
  constructor(readonly ability: string) {
    super(`The team the token acts in does not allow tokens the "${ability}" ability.`);
    this.challenge = `Bearer realm="${BEARER_REALM}", error="insufficient_scope", scope="${ability}", error_description="ability_not_allowed_by_team"`;
  }
}
