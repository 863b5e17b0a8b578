import { DomainError } from '../common/errors/domain.error.js';

/** The same answer for an unknown email and a wrong password, so neither can be probed. */
export class InvalidCredentialsError extends DomainError {
  readonly code = 'invalid_credentials';
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
  constructor() {
    super(
      'This account is disabled: it cannot sign in until an operator enables it again. Ask whoever runs Tessera for you.',
    );
  }
}

export class SignInRequiredError extends DomainError {
  readonly code = 'sign_in_required';
  constructor() {
    super('Please sign in to continue.');
  }
}

/** What a request from another site tried: a visitor's form, or resuming a confirmed action. */
export type CrossSiteAttempt = 'visitor_form' | 'resumed_action';

/**
 * A request a browser says came from another site (or would not say where from), where only
 * Tessera's own pages may lead. `message` says what was not done and what to do instead.
 */
export class CrossSiteRequestError extends DomainError {
  readonly code = 'cross_site_request';
  constructor(
    message: string,
    readonly attempt: CrossSiteAttempt,
  ) {
    super(message);
  }
}

export class AlreadySignedInError extends DomainError {
  readonly code = 'already_signed_in';
  constructor() {
    super('You are already signed in.');
  }
}

/** A token without the ability a route needs (RFC 6750's `insufficient_scope`). */
export class InsufficientScopeError extends DomainError {
  readonly code = 'insufficient_scope';
  constructor(readonly scope: string) {
    super(`The token lacks the "${scope}" ability this endpoint needs.`);
  }
}

/**
 * A token holding the ability a route needs, acting in a team whose policy does not allow that
 * ability to tokens: 403, naming the ability.
 */
export class AbilityNotAllowedByTeamError extends DomainError {
  readonly code = 'ability_not_allowed_by_team';
  constructor(readonly ability: string) {
    super(`The team the token acts in does not allow tokens the "${ability}" ability.`);
  }
}
