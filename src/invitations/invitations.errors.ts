import { AccountLinkError, type LinkProblem } from '../one-time-links/one-time-links.errors.js';
import { ConflictError, DomainError, NotFoundError } from '../common/errors/domain.error.js';

/** An invitation link that cannot be used: a page that says why. */
export class InvitationLinkError extends AccountLinkError {
  constructor(problem: LinkProblem) {
    super(problem, 'invitation');
  }
}

export class InvitationNotFoundError extends NotFoundError {
  constructor() {
    super('invitation');
  }
}

export class AlreadyInvitedError extends ConflictError {
  constructor() {
    super(
      'already_invited',
      'That address has an invitation waiting already: resend that one instead.',
      'email',
    );
  }
}

/** Someone signed in as another person (or with the address not confirmed) opened the link. */
export class WrongInviteeError extends DomainError {
  readonly code = 'wrong_invitee';
  constructor(signedInAs: string) {
    super(
      `This invitation was sent to another address, or yours is not confirmed yet. You are signed in as ${signedInAs}; nothing was changed.`,
    );
  }
}
