import { beforeEach, describe, expect, it } from '@jest/globals';
import { Actors } from '../common/actor.js';
import { OwnerOnlyError } from './teams.errors.js';
import { ADAM, APOLLO, OLIVIA, TeamServices } from '../../test/support/team-services.js';

describe('TeamPoliciesService', () => {
  const h = new TeamServices();
  beforeEach(() => h.reset());

  it("should publish the owner's change of the policy, with the policy before it, in the transaction that saves it, and nothing when nothing changed", async () => {
    const actor = Actors.person(OLIVIA);
    const input = { requireTwoFactor: false, tokenMaxLifetimeDays: 30 };
    await h.policies.setPolicy(actor, APOLLO, input);
    expect(h.publish).toHaveBeenCalledWith(h.manager, 'team.policy_changed', {
      actor,
      team: { id: APOLLO, name: 'Apollo' },
      previous: { requireTwoFactor: false, tokenMaxLifetimeDays: null, allowedAbilities: null },
      policy: { requireTwoFactor: false, tokenMaxLifetimeDays: 30, allowedAbilities: null },
    });
    h.publish.mockClear();
    await h.policies.setPolicy(actor, APOLLO, input);
    expect(h.publish).not.toHaveBeenCalled();
    // Shown before it is saved: checked as saving checks it, nothing written.
    await expect(h.policies.proposePolicy(Actors.person(ADAM), APOLLO, input)).rejects.toThrow(
      OwnerOnlyError,
    );
    await expect(
      h.policies.proposePolicy(actor, APOLLO, { ...input, tokenMaxLifetimeDays: 7 }),
    ).resolves.toMatchObject({ policy: { tokenMaxLifetimeDays: 7 } });
    // The two saves wrote; the proposals did not.
    expect(h.teams.setPolicy).toHaveBeenCalledTimes(2);
  });
});
