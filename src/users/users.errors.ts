import { ConflictError, NotFoundError } from '../common/errors/domain.error.js';

export class EmailTakenError extends ConflictError {
  constructor() {
    super('email_taken', 'An account with this email already exists.', 'email');
  }
}

export class UserNotFoundError extends NotFoundError {
  constructor() {
    super('user');
  }
}
