import { describe, expect, it } from '@jest/globals';
import { relativeTime } from './view-helpers.js';

const NOW = Date.UTC(2026, 10, 24, 12, 0, 0);
const MIN = 60_000;

describe('relativeTime', () => {
  it.each([
    [NOW - 10_000, 'just now'],
    [NOW - 3 * MIN, '3 minutes ago'],
    [NOW - 60 * MIN, '60 minutes ago'],
    [NOW - 2 * 60 * MIN, '2 hours ago'],
    [NOW - 30 * 60 * MIN, '30 hours ago'],
    [NOW - 3 * 24 * 60 * MIN, '3 days ago'],
    [NOW - 90 * 24 * 60 * MIN, 'on 2026-08-26'],
    [NOW + 5 * MIN, 'in 5 minutes'],
    [NOW + 24 * 60 * MIN, 'in 24 hours'],
    [NOW + 7 * 24 * 60 * MIN, 'in 7 days'],
    [NOW - MIN, '1 minute ago'],
  ])('should say %s as "%s"', (at, words) => {
    expect(relativeTime(at, NOW)).toBe(words);
  });
});
