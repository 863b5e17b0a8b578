import { ConflictError, DomainError } from '../common/errors/domain.error.js';

export class EmailTakenError extends ConflictError {
  constructor() {
    super('email_taken', 'An account with this email already exists.');
  }
}

export class UserNotFoundError extends DomainError {
  readonly code = 'not_found';
  constructor() {
    super('No such user.');
  }
}
