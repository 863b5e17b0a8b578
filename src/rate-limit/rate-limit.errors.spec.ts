import { describe, expect, it } from '@jest/globals';
import { RateLimitedError, waitInWords } from './rate-limit.errors.js';

describe('waitInWords', () => {
  it('should say seconds up to two minutes, then minutes, then hours, rounded up', () => {
    expect([1, 42, 119, 120, 121, 2932, 3600, 7199, 7200, 7201].map(waitInWords)).toEqual([
      '1 second',
      '42 seconds',
      '119 seconds',
      '2 minutes',
      '3 minutes',
      '49 minutes',
      '60 minutes',
      '120 minutes',
      '2 hours',
      '3 hours',
    ]);
  });

  it("should be a refusal's words when it says nothing more", () => {
    expect(new RateLimitedError(2932).message).toBe('Too many requests. Try again in 49 minutes.');
  });
});
