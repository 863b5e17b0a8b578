import { DomainError } from '../common/errors/domain.error.js';

export type LinkProblem = 'expired' | 'used' | 'unknown' | 'withdrawn';

/** What a mailed link was for. */
export type LinkPurpose = 'invitation' | 'email change' | 'password reset' | 'confirmation';

/** What else makes a link of this purpose unknown. */
const UNKNOWN_ALSO: Partial<Record<string, string>> = {
  invitation: ', or the team may have been deleted',
};

const MESSAGES: Record<LinkProblem, (what: string) => string> = {
  expired: (what) => `This ${what} link has expired.`,
  used: (what) => `This ${what} link has already been used.`,
  withdrawn: (what) => `This ${what} link no longer works: it was withdrawn.`,
  unknown: (what) =>
    `This ${what} link is not valid. It may be incomplete, or a newer link may have replaced it${UNKNOWN_ALSO[what] ?? ''}.`,
};

/** A mailed link that cannot be used: a page that says why, and how to get a new one. */
export class AccountLinkError extends DomainError {
  readonly code: `link_${LinkProblem}`;

  constructor(
    readonly problem: LinkProblem,
    readonly purpose: LinkPurpose,
  ) {
    super(MESSAGES[problem](purpose));
    this.code = `link_${problem}`;
  }
}
