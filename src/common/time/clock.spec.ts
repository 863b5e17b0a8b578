import { describe, expect, it } from '@jest/globals';
import { isoTimestampMicros } from './clock.js';

describe('isoTimestampMicros', () => {
  it('should give UTC ISO 8601 with six fractional digits close to the wall clock', () => {
    const stamp = isoTimestampMicros();
    expect(stamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    expect(Math.abs(Date.parse(stamp) - Date.now())).toBeLessThan(5);
  });

  it('should carry real sub-millisecond digits and never go backwards', () => {
    const stamps = Array.from({ length: 2000 }, () => isoTimestampMicros());
    expect(stamps.some((s) => s.slice(23, 26) !== '000')).toBe(true);
    const sorted = [...stamps].sort();
    expect(sorted).toEqual(stamps);
  });
});
