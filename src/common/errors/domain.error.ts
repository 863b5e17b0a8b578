import type { DomainErrorCode } from './error-codes.js';

export type { DomainErrorCode } from './error-codes.js';

/**
 * An expected failure that the domain names with a stable code, a message and its data (the
 * fields at fault, when to try again). It says nothing of how it is answered: each door maps its
 * code to its own answer (the API's status, envelope and challenge in api/v1/api-errors.ts, a
 * page, redirect or flash in web/page-errors.ts).
 */
export abstract class DomainError extends Error {
  abstract readonly code: DomainErrorCode;
  /** For refusals that pass: when to try again, in seconds. */
  readonly retryAfterSeconds?: number;

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
  constructor(what: string) {
    super(`No such ${what}.`);
  }
}

/** Something this person may not do, though they may see what it concerns. */
export class ForbiddenError extends DomainError {
  readonly code = 'forbidden';
}

/** Input that breaks a rule; `fields` maps each bad field to what is wrong with it. */
export class ValidationError extends DomainError {
  readonly code = 'validation_failed';
  constructor(readonly fields: Record<string, string>) {
    super(Object.values(fields).join(' '));
  }
}

/**
 * Runs every check, so that a form hears of all its mistakes at once: the fields of the
 * ValidationErrors they throw are told together; any other error is thrown as it is.
 */
export async function checkedTogether<T extends unknown[]>(
  ...checks: { [K in keyof T]: () => T[K] | Promise<T[K]> }
): Promise<T> {
  const results = await Promise.allSettled(checks.map(async (check) => check()));
  const fields: Record<string, string> = {};
  for (const result of results) {
    if (result.status === 'fulfilled') continue;
    if (!(result.reason instanceof ValidationError)) throw result.reason;
    Object.assign(fields, result.reason.fields);
  }
  if (Object.keys(fields).length > 0) throw new ValidationError(fields);
  return results.map((r) => (r as PromiseFulfilledResult<unknown>).value) as T;
}

/** A clash with what exists; `field` is the form field it is about, when there is one. */
export class ConflictError extends DomainError {
  constructor(
    readonly code: DomainErrorCode,
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
  constructor() {
    super('Something this refers to does not exist (any more).');
  }
}

/** A change to something that other records still refer to, refused by a foreign key. */
export class StillReferencedError extends DomainError {
  readonly code = 'still_referenced';
  constructor() {
    super('Other records still refer to this, so it cannot be changed or removed.');
  }
}
