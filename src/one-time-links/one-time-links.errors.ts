import { DomainError, type NextStep } from '../common/errors/domain.error.js';

export type LinkProblem = 'expired' | 'used' | 'unknown' | 'withdrawn';

const MESSAGES: Record<LinkProblem, (what: string) => string> = {
  expired: (what) => `This ${what} link has expired.`,
  used: (what) => `This ${what} link has already been used.`,
  withdrawn: (what) => `This ${what} link no longer works: it was withdrawn.`,
  unknown: (what) =>
    `This ${what} link is not valid. It may be incomplete, or a newer link may have replaced it.`,
};

/** A mailed link that cannot be used: a page that says why, and how to get a new one. */
export class AccountLinkError extends DomainError {
  readonly code: string;
  readonly status: 404 | 410;

  constructor(
    readonly problem: LinkProblem,
    what: string,
    override readonly nextStep: NextStep,
  ) {
    super(MESSAGES[problem](what));
    this.code = `link_${problem}`;
    this.status = problem === 'unknown' ? 404 : 410;
  }
}
