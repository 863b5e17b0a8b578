import { describe, expect, it } from '@jest/globals';
import {
  exceedsMaxLifetime,
  teamRefusalOf,
  teamRefusalsOf,
  type GovernedToken,
} from './team-policy.js';

function token(overrides: Partial<GovernedToken> = {}, policy = {}): GovernedToken {
  return {
    binding: 'current',
    lifetimeDays: 30,
    team: {
      name: 'Acme',
      policy: {
        requireTwoFactor: false,
        tokenMaxLifetimeDays: null,
        allowedAbilities: null,
        ...policy,
      },
    },
    user: { twoFactor: false },
    ...overrides,
  };
}

describe('teamRefusalOf', () => {
  it('should let a token act when its team has no policy', () => {
    expect(teamRefusalOf(token())).toBeNull();
  });

  it('should refuse a pinned token whose team is gone or left, and not a following one without a team', () => {
    expect(teamRefusalOf(token({ binding: 'pinned', team: null }))).toBe('team_access_lost');
    expect(teamRefusalOf(token({ binding: 'current', team: null }))).toBeNull();
  });

  it('should refuse when the team requires two-factor sign-in and the person has not turned it on', () => {
    expect(teamRefusalOf(token({}, { requireTwoFactor: true }))).toBe('two_factor_required');
    expect(
      teamRefusalOf(token({ user: { twoFactor: true } }, { requireTwoFactor: true })),
    ).toBeNull();
  });

  it('should refuse a lifetime over the maximum, or none at all, and accept one exactly at it', () => {
    expect(teamRefusalOf(token({}, { tokenMaxLifetimeDays: 30 }))).toBeNull();
    expect(teamRefusalOf(token({}, { tokenMaxLifetimeDays: 29 }))).toBe(
      'token_lifetime_exceeds_policy',
    );
    expect(teamRefusalOf(token({ lifetimeDays: null }, { tokenMaxLifetimeDays: 3650 }))).toBe(
      'token_lifetime_exceeds_policy',
    );
  });

  it('should compare the lifetime chosen in days, so exactly the maximum is never over it', () => {
    expect(exceedsMaxLifetime(30, 30)).toBe(false);
    expect(exceedsMaxLifetime(31, 30)).toBe(true);
    expect(exceedsMaxLifetime(null, 30)).toBe(true);
    expect(exceedsMaxLifetime(null, null)).toBe(false);
    expect(exceedsMaxLifetime(3650, null)).toBe(false);
  });

  it('should name two-factor first when a token breaks both rules', () => {
    expect(
      teamRefusalOf(
        token({ lifetimeDays: null }, { requireTwoFactor: true, tokenMaxLifetimeDays: 90 }),
      ),
    ).toBe('two_factor_required');
  });
});

describe('teamRefusalsOf', () => {
  it("should give every reason when two apply, the API's first, and none when the token may act", () => {
    const both = token(
      { lifetimeDays: null },
      { requireTwoFactor: true, tokenMaxLifetimeDays: 90 },
    );
    expect(teamRefusalsOf(both)).toEqual(['two_factor_required', 'token_lifetime_exceeds_policy']);
    expect(teamRefusalOf(both)).toBe('two_factor_required');
    expect(teamRefusalsOf(token())).toEqual([]);
  });
});
