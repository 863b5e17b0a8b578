import { describe, expect, it } from '@jest/globals';
import { hashRecoveryCode, newRecoveryCode, normalizeRecoveryCode } from './recovery-codes.js';

describe('recovery codes', () => {
  it('should be four groups of four base32 characters, all different', () => {
    const codes = Array.from({ length: 200 }, newRecoveryCode);
    for (const code of codes)
      expect(code).toMatch(/^[0-9a-hjkmnp-tv-z]{4}(-[0-9a-hjkmnp-tv-z]{4}){3}$/);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it('should read a code typed in capitals, without dashes or with O for 0 and I or L for 1 as the code', () => {
    const code = '0a1b-2c3d-4e5f-6g7h';
    const expected = normalizeRecoveryCode(code);
    expect(expected).toBe('0a1b2c3d4e5f6g7h');
    for (const typed of [
      '0A1B-2C3D-4E5F-6G7H',
      '0a1b 2c3d 4e5f 6g7h',
      'oa1b2c3d4e5f6g7h',
      '0alb2c3d4e5f6g7h',
    ]) {
      expect(normalizeRecoveryCode(typed)).toBe(expected);
    }
  });

  it('should not read anything else as a code', () => {
    for (const typed of [
      '',
      '0a1b-2c3d-4e5f',
      '0a1b-2c3d-4e5f-6g7h-8j9k',
      '0a1b-2c3d-4e5f-6g7u',
      '🦄'.repeat(16),
    ]) {
      expect(normalizeRecoveryCode(typed)).toBeNull();
    }
  });

  it('should store a code as the SHA-256 of its normalised form', () => {
    expect(hashRecoveryCode('0a1b2c3d4e5f6g7h')).toMatch(/^[0-9a-f]{64}$/);
    expect(hashRecoveryCode('0a1b2c3d4e5f6g7h')).not.toBe(hashRecoveryCode('0a1b2c3d4e5f6g7j'));
  });
});
