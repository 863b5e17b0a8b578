import { describe, expect, it } from '@jest/globals';
import { expiryOptions, regeneratedExpiry, resolveExpiry } from './token-expiry.js';

const NOW = Date.parse('2026-11-23T15:30:00Z');
const DAY_MS = 86_400_000;

describe('token expiry', () => {
  it('should offer every lifetime, a date and "never" when there is no maximum, 30 days first', () => {
    const options = expiryOptions(null, NOW);
    expect(options.choices.map((c) => c.value)).toEqual(['7', '30', '90', '365', 'custom', 'none']);
    expect(options).toMatchObject({
      defaultChoice: '30',
      firstDate: '2026-11-24',
      lastDate: '2036-11-20',
    });
  });

  it('should offer only what fits under a maximum, and never "never"', () => {
    expect(expiryOptions(60, NOW).choices.map((c) => c.value)).toEqual(['7', '30', 'custom']);
    expect(expiryOptions(60, NOW).lastDate).toBe('2027-01-22');
    expect(expiryOptions(20, NOW).defaultChoice).toBe('7');
    expect(expiryOptions(3, NOW)).toMatchObject({
      defaultChoice: 'custom',
      lastDate: '2026-11-26',
    });
  });

  it('should count days from now and make a date expire as that UTC day begins', () => {
    expect(resolveExpiry({ expiresInDays: 30 }, null, NOW)).toEqual(new Date(NOW + 30 * DAY_MS));
    expect(resolveExpiry({ expiresOn: '2026-11-24' }, null, NOW)).toEqual(
      new Date('2026-11-24T00:00:00Z'),
    );
    expect(resolveExpiry({}, null, NOW)).toBeNull();
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
    [{}, 60, { expires_in_days: 'Tokens must expire within 60 days here: choose an expiry.' }],
  ])('should refuse %j under a maximum of %s days', (request, max, fields) => {
    expect(() => resolveExpiry(request, max, NOW)).toThrow(expect.objectContaining({ fields }));
  });

  it('should accept the last day the maximum allows', () => {
    expect(resolveExpiry({ expiresOn: '2027-01-22' }, 60, NOW)).toEqual(
      new Date('2027-01-22T00:00:00Z'),
    );
    expect(resolveExpiry({ expiresInDays: 60 }, 60, NOW)).toEqual(new Date(NOW + 60 * DAY_MS));
  });

  it('should give a regenerated token its lifetime again from now, from its last regeneration', () => {
    const createdAt = new Date(NOW - 100 * DAY_MS);
    const token = { createdAt, regeneratedAt: null, expiresAt: new Date(NOW - 70 * DAY_MS) };
    expect(regeneratedExpiry(token, null, NOW)).toEqual(new Date(NOW + 30 * DAY_MS));
    const again = {
      createdAt,
      regeneratedAt: new Date(NOW - DAY_MS),
      expiresAt: new Date(NOW + 29 * DAY_MS),
    };
    expect(regeneratedExpiry(again, null, NOW)).toEqual(new Date(NOW + 30 * DAY_MS));
  });

  it('should keep "never" when regenerating without a maximum, and cut to the maximum otherwise', () => {
    const never = { createdAt: new Date(NOW - DAY_MS), regeneratedAt: null, expiresAt: null };
    expect(regeneratedExpiry(never, null, NOW)).toBeNull();
    expect(regeneratedExpiry(never, 60, NOW)).toEqual(new Date(NOW + 60 * DAY_MS));
    const year = {
      createdAt: new Date(NOW),
      regeneratedAt: null,
      expiresAt: new Date(NOW + 365 * DAY_MS),
    };
    expect(regeneratedExpiry(year, 60, NOW)).toEqual(new Date(NOW + 60 * DAY_MS));
  });
});
