import { DomainError } from '../common/errors/domain.error.js';

export class EmailNotVerifiedError extends DomainError {
  readonly code = 'email_not_verified';
  /** `before`: what needs the confirmed address ("creating API tokens"). */
  constructor(before = 'creating API tokens') {
    super(
      `Confirm your email address before ${before}: follow the link we mailed you, or ask for a new one on the API tokens page.`,
    );
  }
}
