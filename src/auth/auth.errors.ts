import { DomainError } from '../common/errors/domain.error.js';

/** The same answer for an unknown email and a wrong password, so neither can be probed. */
export class InvalidCredentialsError extends DomainError {
  readonly code = 'invalid_credentials';
  constructor() {
    super('These credentials do not match our records.');
  }
}

export class SignInRequiredError extends DomainError {
  readonly code = 'sign_in_required';
  constructor() {
    super('Please sign in to continue.');
  }
}

export class AlreadySignedInError extends DomainError {
  readonly code = 'already_signed_in';
  constructor() {
    super('You are already signed in.');
  }
}
