/**
 * The top-level domain RFC 2606 reserves for names that are never real: mail to it cannot be
 * delivered. Service accounts have their addresses there, so no person can register, be
 * invited with or move to one, and nothing is ever mailed to one.
 */
export const RESERVED_TLD = 'invalid';

/** Whether the address's domain is under `.invalid` (compared without case). */
export function isReservedAddress(email: string): boolean {
  const domain = email
    .slice(email.lastIndexOf('@') + 1)
    .trim()
    .toLowerCase();
  return domain === RESERVED_TLD || domain.endsWith(`.${RESERVED_TLD}`);
}
