import { describe, expect, it } from '@jest/globals';
import {
  defaultLifetimeDays,
  expiryOptions,
  lifetimeLimit,
  keptLifetimeDays,
  lifetimeRefusal,
  resolveExpiry,
} from './token-lifetimes.js';

const NOW = Date.parse('2026-11-23T15:30:00Z');
const DAY_MS = 86_400_000;
/** The deployment's maximum alone (TOKEN_MAX_LIFETIME_DAYS), or none. */
const deployment = (maxDays: number | null) => ({ maxDays, team: null });
const acme = (maxDays: number) => ({ maxDays, team: 'Acme' });

describe('token expiry', () => {
  it('should offer every lifetime, a date and "never" when there is no maximum, 30 days first', () => {
    const options = expiryOptions(deployment(null), NOW);
    expect(options.choices.map((c) => c.value)).toEqual(['7', '30', '90', '365', 'custom', 'none']);
    expect(options).toMatchObject({
      defaultChoice: '30',
      firstDate: '2026-11-24',
      lastDate: '2036-11-20',
    });
  });

  it('should offer only what fits under a maximum, and never "never"', () => {
    expect(expiryOptions(deployment(60), NOW).choices.map((c) => c.value)).toEqual([
      '7',
      '30',
      'custom',
    ]);
    expect(expiryOptions(deployment(60), NOW).lastDate).toBe('2027-01-22');
    expect(expiryOptions(deployment(20), NOW).defaultChoice).toBe('7');
    expect(expiryOptions(deployment(3), NOW)).toMatchObject({
      defaultChoice: 'custom',
      lastDate: '2026-11-26',
    });
  });

  it('should count days from now and make a date expire as that UTC day begins', () => {
    expect(resolveExpiry({ expiresInDays: 30 }, deployment(null), NOW)).toEqual({
      expiresAt: new Date(NOW + 30 * DAY_MS),
      days: 30,
    });
    // A date's days are counted from today, as the form's date field counts them.
    expect(resolveExpiry({ expiresOn: '2026-11-24' }, deployment(null), NOW)).toEqual({
      expiresAt: new Date('2026-11-24T00:00:00Z'),
      days: 1,
    });
    expect(resolveExpiry({}, deployment(null), NOW)).toEqual({ expiresAt: null, days: null });
  });

  it.each([
    [{ expiresOn: '2026-11-23' }, null, { expires_at: 'Choose a date after today.' }],
    [{ expiresOn: '2026-02-30' }, null, { expires_at: 'Enter a real date, as YYYY-MM-DD.' }],
    [
      { expiresOn: '2027-01-23' },
      60,
      { expires_at: 'Choose a date at most 60 days from today (2027-01-22 at the latest).' },
    ],
    [{ expiresInDays: 61 }, 60, { expires_in_days: 'Tokens may live at most 60 days.' }],
    [{}, 60, { expires_in_days: 'Tokens may live at most 60 days: choose an expiry.' }],
  ])('should refuse %j under a maximum of %s days', (request, max, fields) => {
    expect(() => resolveExpiry(request, deployment(max), NOW)).toThrow(
      expect.objectContaining({ fields }),
    );
  });

  it.each([
    [{ expiresInDays: 31 }, { expires_in_days: 'Acme allows tokens of at most 30 days.' }],
    [{}, { expires_in_days: 'Acme allows tokens of at most 30 days: choose an expiry.' }],
    [
      { expiresOn: '2026-12-24' },
      { expires_at: 'Acme allows tokens of at most 30 days: choose 2026-12-23 at the latest.' },
    ],
  ])("should name the team when it is the team's maximum that refuses %j", (request, fields) => {
    expect(() => resolveExpiry(request, acme(30), NOW)).toThrow(
      expect.objectContaining({ fields }),
    );
  });

  it("should take the smaller of the deployment's and the team's maximum, naming the team's", () => {
    const team = (days: number | null) => ({
      name: 'Acme',
      policy: { tokenMaxLifetimeDays: days },
    });
    expect(lifetimeLimit(null, null)).toEqual(deployment(null));
    expect(lifetimeLimit(90, null)).toEqual(deployment(90));
    expect(lifetimeLimit(90, team(null))).toEqual(deployment(90));
    expect(lifetimeLimit(90, team(30))).toEqual(acme(30));
    expect(lifetimeLimit(90, team(90))).toEqual(acme(90));
    expect(lifetimeLimit(30, team(90))).toEqual(deployment(30));
    expect(lifetimeLimit(null, team(30))).toEqual(acme(30));
  });

  it('should allow exactly the maximum, and "never" only without one', () => {
    expect(lifetimeRefusal(30, acme(30))).toBeNull();
    expect(lifetimeRefusal(31, acme(30))).toBe('Acme allows tokens of at most 30 days.');
    expect(lifetimeRefusal(null, acme(30))).toBe(
      'Acme allows tokens of at most 30 days: choose an expiry.',
    );
    expect(lifetimeRefusal(null, deployment(null))).toBeNull();
    expect(defaultLifetimeDays(deployment(null))).toBe(30);
    expect(defaultLifetimeDays(acme(7))).toBe(7);
    expect(expiryOptions(acme(30), NOW)).toMatchObject({
      defaultChoice: '30',
      lastDate: '2026-12-23',
      hint: 'Acme allows tokens of at most 30 days.',
    });
  });

  it('should accept the last day the maximum allows', () => {
    expect(resolveExpiry({ expiresOn: '2027-01-22' }, deployment(60), NOW)).toEqual({
      expiresAt: new Date('2027-01-22T00:00:00Z'),
      days: 60,
    });
    expect(resolveExpiry({ expiresInDays: 60 }, deployment(60), NOW)).toEqual({
      expiresAt: new Date(NOW + 60 * DAY_MS),
      days: 60,
    });
  });

  it('should keep the lifetime a regenerated token was given, "never" only without a maximum, cut to it', () => {
    expect(keptLifetimeDays(30, null)).toBe(30);
    expect(keptLifetimeDays(30, 60)).toBe(30);
    expect(keptLifetimeDays(365, 60)).toBe(60);
    expect(keptLifetimeDays(null, null)).toBeNull();
    expect(keptLifetimeDays(null, 60)).toBe(60);
  });
});
