import { describe, expect, it } from '@jest/globals';
import { AbilityCatalog, BUILT_IN_ABILITIES } from '../config/abilities.config.js';
import { policyImpact } from './policy-impact.js';
import type { TeamToken } from './tokens.repository.js';

const catalog = new AbilityCatalog(BUILT_IN_ABILITIES);
const open = { requireTwoFactor: false, tokenMaxLifetimeDays: null, allowedAbilities: null };
const team = { id: 1, name: 'Acme', policy: open };

function tokenOf(id: number, abilities: string[], serviceAccount: boolean): TeamToken {
  return {
    id,
    name: `t${id}`,
    lastFour: '0000',
    abilities,
    createdAt: new Date(0),
    regeneratedAt: null,
    expiresAt: null,
    lifetimeDays: null,
    lastUsedAt: null,
    lastAddress: null,
    pinned: true,
    person: {
      id: 100 + id,
      name: serviceAccount ? 'bot' : 'Ada',
      email: `p${id}@example.com`,
      role: serviceAccount ? null : 'member',
      twoFactor: false,
      serviceAccount,
      disabled: false,
    },
    createdBy: null,
  };
}

describe('policyImpact', () => {
  it("should count what a person's token loses, but not a member-only ability a service account's token never could use", () => {
    const person = tokenOf(1, ['team:read', 'members:read'], false);
    const bot = tokenOf(2, ['team:read', 'members:read'], true);
    const withoutMembers = { ...open, allowedAbilities: ['user:read', 'team:read'] };
    const impact = policyImpact(team, withoutMembers, [person, bot], catalog);
    expect(impact.tokens.map((t) => [t.token.id, t.lostAbilities])).toEqual([
      [1, ['members:read']],
    ]);
    expect(impact.people.map((p) => p.id)).toEqual([101]);

    // What a service account's token can use is still counted when taken away.
    const withoutTeam = { ...open, allowedAbilities: ['members:read'] };
    const taken = policyImpact(team, withoutTeam, [bot], catalog);
    expect(taken.tokens.map((t) => [t.token.id, t.lostAbilities])).toEqual([[2, ['team:read']]]);
  });
});
