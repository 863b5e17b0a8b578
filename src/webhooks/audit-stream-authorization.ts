import { ValidationError } from '../common/errors/domain.error.js';

/** The longest Authorization header value an audit stream keeps. */
export const AUTHORIZATION_MAX = 500;

/** A header value: printable ASCII, no line break (nothing can be added to the request). */
export function acceptableAuthorization(raw: string | null | undefined): string | null {
  const value = raw?.trim() ?? '';
  if (value === '') return null;
  if (value.length > AUTHORIZATION_MAX || !/^[\x21-\x7e][\x20-\x7e]*$/.test(value)) {
    throw new ValidationError({
      authorization: `The Authorization value must be printable ASCII on one line, at most ${AUTHORIZATION_MAX} characters.`,
    });
  }
  return value;
}
