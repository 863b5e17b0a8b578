import { describe, expect, it } from '@jest/globals';
import { bearerRefusal } from './bearer-refusal.js';

describe('bearerRefusal', () => {
  const teamRefusal = { code: 'two_factor_required' } as never;
  const token = (overrides: object = {}) => ({
    abilities: ['team:read'],
    teamRefusal: null,
    team: { policy: { allowedAbilities: ['user:read'] } },
    ...overrides,
  });

  it("should refuse in the API's order: the team's refusal, a missing ability, one the team does not allow", () => {
    expect(bearerRefusal(token({ teamRefusal }), 'user:read')).toBe(teamRefusal);
    expect(bearerRefusal(token(), 'user:read')?.code).toBe('insufficient_scope');
    expect(bearerRefusal(token(), 'team:read')?.code).toBe('ability_not_allowed_by_team');
    expect(bearerRefusal(token({ team: null }), 'team:read')).toBeNull();
    expect(bearerRefusal(token({ teamRefusal }), undefined)).toBe(teamRefusal);
  });

  it('should leave the team out of what does not act in it (GET /api/v1/token)', () => {
    expect(bearerRefusal(token({ teamRefusal }), 'team:read', false)).toBeNull();
    expect(bearerRefusal(token(), 'user:read', false)?.code).toBe('insufficient_scope');
  });
});
