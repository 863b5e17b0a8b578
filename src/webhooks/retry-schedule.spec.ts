import { describe, expect, it } from '@jest/globals';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS, retryDelayMs } from './retry-schedule.js';

describe('retryDelayMs', () => {
  it("should wait the schedule's delay, less at most a tenth, when an attempt failed", () => {
    expect(retryDelayMs(1, () => 0)).toBe(5_000);
    expect(retryDelayMs(1, () => 0.5)).toBe(4_750);
    expect(retryDelayMs(2, () => 0.5)).toBe(Math.round(5 * 60_000 * 0.95));
  });

  it('should keep trying for more than 24 hours when every wait is cut by the most', () => {
    const shortest = RETRY_DELAYS_MS.reduce((sum, _, i) => sum + retryDelayMs(i + 1, () => 1)!, 0);
    expect(shortest).toBeGreaterThan(24 * 3_600_000);
  });

  it('should stop when the last attempt failed', () => {
    expect(retryDelayMs(MAX_ATTEMPTS)).toBeNull();
    expect(retryDelayMs(MAX_ATTEMPTS - 1)).not.toBeNull();
  });
});
