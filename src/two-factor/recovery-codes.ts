import { createHash, randomInt } from 'node:crypto';

/** How many recovery codes a person gets at a time. */
export const RECOVERY_CODE_COUNT = 10;

/** Crockford's base32: no I, L, O or U, so a code read off paper is typed back right. */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const GROUPS = 4;
const GROUP_LENGTH = 4;

/**
 * A new recovery code: 16 random characters of 5 bits each (80 bits), shown in groups of four
 * (`7k2m-q9xd-4hvw-0bnr`). That is far beyond guessing, online or from a stolen hash, so one
 * SHA-256 of it is enough to store.
 */
export function newRecoveryCode(): string {
  const groups: string[] = [];
  for (let g = 0; g < GROUPS; g++) {
    let group = '';
    for (let i = 0; i < GROUP_LENGTH; i++) group += ALPHABET[randomInt(ALPHABET.length)];
    groups.push(group);
  }
  return groups.join('-');
}

/**
 * The code as it is hashed: case, spaces and dashes ignored, and the letters people mistake
 * for digits read as those digits; null when it cannot be a code of ours.
 */
export function normalizeRecoveryCode(typed: string): string | null {
  const code = typed
    .toLowerCase()
    .replace(/[\s-]+/g, '')
    .replace(/o/g, '0')
    .replace(/[il]/g, '1');
  const pattern = new RegExp(`^[${ALPHABET}]{${GROUPS * GROUP_LENGTH}}$`);
  return pattern.test(code) ? code : null;
}

/** SHA-256 in hex of the normalised code: what is stored, and looked up. */
export function hashRecoveryCode(normalized: string): string {
  return createHash('sha256').update(normalized).digest('hex');
}
