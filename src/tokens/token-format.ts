import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * Tokens look like `tsr_` + 30 random base62 characters + 6 base62 characters of the CRC32 of
 * the random part: 40 characters, recognisable by secret scanners, and checkable without a
 * database round trip.
 */
export const TOKEN_PREFIX = 'tsr_';
export const TOKEN_PATTERN = /^tsr_[0-9A-Za-z]{36}$/;
const RANDOM_LENGTH = 30;
const CHECKSUM_LENGTH = 6;
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
// 62 * 4 = 248: bytes at or above it are dropped, so each character is exactly uniform.
const UNBIASED_LIMIT = 248;

export interface GeneratedToken {
  plaintext: string;
  hash: string;
  lastFour: string;
}

export function generateToken(): GeneratedToken {
  const random = randomBase62(RANDOM_LENGTH);
  const plaintext = `${TOKEN_PREFIX}${random}${checksum(random)}`;
  return { plaintext, hash: hashToken(plaintext), lastFour: plaintext.slice(-4) };
}

/** True when the value has the token's shape and its checksum matches. */
export function isWellFormedToken(value: string): boolean {
  if (!TOKEN_PATTERN.test(value)) {
    return false;
  }
  const random = value.slice(TOKEN_PREFIX.length, TOKEN_PREFIX.length + RANDOM_LENGTH);
  return value.slice(-CHECKSUM_LENGTH) === checksum(random);
}

export function hashToken(plaintext: string): string {
  return createHash('sha256').update(plaintext).digest('hex');
}

function checksum(random: string): string {
  let value = crc32(random);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = ALPHABET[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < UNBIASED_LIMIT && out.length < length) {
        out += ALPHABET[byte % 62];
      }
    }
  }
  return out;
}
