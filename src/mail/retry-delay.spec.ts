import { describe, expect, it } from '@jest/globals';
import { retryDelayMs } from './retry-delay.js';

describe('retryDelayMs', () => {
  it('should wait the first delay after one failure and double it after each further one', () => {
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(n, 15_000))).toEqual([
      15_000, 30_000, 60_000, 120_000, 240_000,
    ]);
  });

  it('should never wait more than six hours when a message has failed many times', () => {
    expect(retryDelayMs(40, 15_000)).toBe(6 * 3_600_000);
  });
});
