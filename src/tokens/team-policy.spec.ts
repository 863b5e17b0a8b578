import { describe, expect, it } from '@jest/globals';
import { teamRefusalOf, type GovernedToken } from './team-policy.js';

const DAY = 86_400_000;
const created = new Date('2026-11-01T00:00:00Z');

function token(overrides: Partial<GovernedToken> = {}, policy = {}): GovernedToken {
  return {
    binding: 'current',
    createdAt: created,
    regeneratedAt: null,
    expiresAt: new Date(created.getTime() + 30 * DAY),
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
    expect(teamRefusalOf(token({ expiresAt: null }, { tokenMaxLifetimeDays: 3650 }))).toBe(
      'token_lifetime_exceeds_policy',
    );
  });

  it("should count a regenerated token's lifetime from its regeneration", () => {
    const regeneratedAt = new Date(created.getTime() + 100 * DAY);
    const expiresAt = new Date(regeneratedAt.getTime() + 90 * DAY);
    expect(
      teamRefusalOf(token({ regeneratedAt, expiresAt }, { tokenMaxLifetimeDays: 90 })),
    ).toBeNull();
  });

  it('should name two-factor first when a token breaks both rules', () => {
    expect(
      teamRefusalOf(
        token({ expiresAt: null }, { requireTwoFactor: true, tokenMaxLifetimeDays: 90 }),
      ),
    ).toBe('two_factor_required');
  });
});
