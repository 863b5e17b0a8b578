import { domainToASCII } from 'node:url';

/** The longest address stored (the column's length), counted in its one form. */
export const EMAIL_MAX = 255;

/**
 * The one form an address is stored and looked up in, so that one mailbox is one account
 * whichever way its address is typed: trimmed, composed (NFC: `u` + U+0308 is `ü`), lower-cased,
 * and with its domain as mail carries it (IDNA: `bücher.example` is `xn--bcher-kva.example`).
 * A domain IDNA refuses is left as typed, for validation to refuse.
 */
export function normalizeEmail(email: string): string {
  const address = email.trim().toLowerCase().normalize('NFC');
  const at = address.lastIndexOf('@');
  if (at < 0) return address;
  const domain = domainToASCII(address.slice(at + 1));
  return domain === '' ? address : `${address.slice(0, at + 1)}${domain}`;
}
