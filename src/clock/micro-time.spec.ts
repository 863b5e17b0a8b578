import { describe, expect, it } from '@jest/globals';
import { isoMicrosOfMachine } from './micro-time.js';

describe('isoMicrosOfMachine', () => {
  it('should give UTC ISO 8601 with six fractional digits close to the wall clock', () => {
    // Between two readings of the wall clock, however long the machine took between them (it
    // is re-anchored when more than a millisecond or two off).
    const before = Date.now();
    const stamp = isoMicrosOfMachine();
    const after = Date.now();
    expect(stamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    expect(Date.parse(stamp)).toBeGreaterThanOrEqual(before - 1);
    expect(Date.parse(stamp)).toBeLessThanOrEqual(after + 2);
  });

  it('should carry real sub-millisecond digits and never go backwards', () => {
    const stamps = Array.from({ length: 2000 }, () => isoMicrosOfMachine());
    expect(stamps.some((s) => s.slice(23, 26) !== '000')).toBe(true);
    const sorted = [...stamps].sort();
    expect(sorted).toEqual(stamps);
  });
});
