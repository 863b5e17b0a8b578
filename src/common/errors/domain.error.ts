/** The statuses a domain error may answer with: each error class names its own. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 410 | 413 | 415 | 422 | 429 | 503;

/** Where a person can go on from an error page (ask for a new link, say). */
export interface NextStep {
  href: string;
  label: string;
}

/**
 * An expected failure that the domain names with a stable code and its HTTP status. Services
 * throw these; the one exception filter turns them into the API's envelope or a page.
 */
export abstract class DomainError extends Error {
  abstract readonly code: string;
  abstract readonly status: ErrorStatus;
  /** For refusals that pass: when the client may try again (sent as Retry-After). */
  readonly retryAfterSeconds?: number;
  /** For authentication failures: the WWW-Authenticate challenge (RFC 6750) an API answer carries. */
  readonly challenge?: string;
  /** For pages: where to send the person instead of showing an error page. */
  readonly pageRedirect?: string;
  /** For pages: a way on, shown as a button on the error page. */
  readonly nextStep?: NextStep;

  constructor(message: string) {
    // An expected outcome, answered by its code: a stack trace would say nothing useful, and
    // capturing one through Nest's and Express's frames is most of what refusing a bad token
    // costs (docs/PERFORMANCE.md).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = new.target.name;
  }
}

/** Also what a user is told about something that exists but is not theirs to see. */
export class NotFoundError extends DomainError {
  readonly code = 'not_found';
  readonly status = 404;
  constructor(what: string) {
    super(`No such ${what}.`);
  }
}

/** Something this person may not do, though they may see what it concerns. */
export class ForbiddenError extends DomainError {
  readonly code = 'forbidden';
  readonly status = 403;
}

/** Input that breaks a rule; `fields` maps each bad field to what is wrong with it. */
export class ValidationError extends DomainError {
  readonly code = 'validation_failed';
  readonly status = 422;
  constructor(readonly fields: Record<string, string>) {
    super(Object.values(fields).join(' '));
  }
}

/** A clash with what exists; `field` is the form field it is about, when there is one. */
export class ConflictError extends DomainError {
  readonly status = 409;
  constructor(
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

/**
 * A write referred to something that is not there (any more): a foreign key refused it. Checks
 * under lock come first where it matters; this is what any write the database refused says.
 */
export class ReferenceNotFoundError extends DomainError {
  readonly code = 'not_found';
  readonly status = 404;
  constructor() {
    super('Something this refers to does not exist (any more).');
  }
}

/** A change to something that other records still refer to, refused by a foreign key. */
export class StillReferencedError extends DomainError {
  readonly code = 'still_referenced';
  readonly status = 422;
  constructor() {
    super('Other records still refer to this, so it cannot be changed or removed.');
  }
}
