import { describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { generateToken, hashToken, isWellFormedToken, TOKEN_PATTERN } from './token-format.js';

describe('token format', () => {
  it('should make 40-character tsr_ tokens with a valid checksum', () => {
    for (let i = 0; i < 200; i++) {
      const { plaintext, hash, lastFour } = generateToken();
      expect(plaintext).toHaveLength(40);
      expect(plaintext).toMatch(TOKEN_PATTERN);
      expect(isWellFormedToken(plaintext)).toBe(true);
      expect(hash).toBe(createHash('sha256').update(plaintext).digest('hex'));
      expect(lastFour).toBe(plaintext.slice(-4));
    }
  });

  it('should never repeat a token when many are made', () => {
    const tokens = new Set(Array.from({ length: 5000 }, () => generateToken().plaintext));
    expect(tokens.size).toBe(5000);
  });

  it('should use every base62 character evenly in the random part', () => {
    const counts = new Map<string, number>();
    const samples = 4000;
    for (let i = 0; i < samples; i++) {
      for (const ch of generateToken().plaintext.slice(4, 34))
        counts.set(ch, (counts.get(ch) ?? 0) + 1);
    }
    expect(counts.size).toBe(62);
    const expected = (samples * 30) / 62;
    // Modulo bias of 256 % 62 would make '0'–'7' about 25% more frequent than the rest.
    for (const n of counts.values()) expect(Math.abs(n - expected) / expected).toBeLessThan(0.1);
  });

  it('should refuse a token when any single character is changed', () => {
    const { plaintext } = generateToken();
    for (let i = 4; i < plaintext.length; i++) {
      const other = plaintext[i] === 'x' ? 'y' : 'x';
      expect(isWellFormedToken(plaintext.slice(0, i) + other + plaintext.slice(i + 1))).toBe(false);
    }
  });

  it.each([
    ['empty', ''],
    ['another prefix', 'ghp_' + 'a'.repeat(36)],
    ['too short', 'tsr_abc'],
    ['too long', generateToken().plaintext + 'a'],
    ['non-base62 characters', 'tsr_' + '-'.repeat(36)],
    ['whitespace', ` ${generateToken().plaintext}`],
  ])('should refuse %s', (_case, value) => {
    expect(isWellFormedToken(value)).toBe(false);
  });

  it('should hash deterministically', () => {
    expect(hashToken('tsr_x')).toBe(hashToken('tsr_x'));
    expect(hashToken('tsr_x')).toMatch(/^[0-9a-f]{64}$/);
  });
});
