import { beforeEach, describe, expect, it } from '@jest/globals';
import { Actors } from '../common/actor.js';
import { ValidationError } from '../common/errors/domain.error.js';
import type { TeamRole } from './team-member.entity.js';
import {
  AlreadyMemberError,
  MemberNotFoundError,
  NotTeamManagerError,
  OwnerCannotLeaveError,
  OwnerOnlyError,
  OwnerRoleError,
  PersonalTeamError,
  TeamNotFoundError,
} from './teams.errors.js';
import {
  ADA,
  ADAM,
  APOLLO,
  MAX,
  MEL,
  OLIVIA,
  personalOf,
  STRANGER,
  TeamServices,
} from '../../test/support/team-services.js';

describe('TeamMembersService', () => {
  const h = new TeamServices();
  beforeEach(() => h.reset());

  it('should let an admin make a member an admin, tell the member, and log the previous role', async () => {
    const actor = Actors.person(ADAM);
    const member = await h.members.changeRole(actor, APOLLO, MEL, 'admin');
    expect(member.id).toBe(MEL);
    expect(h.roleIn(APOLLO, MEL)).toBe('admin');
    expect(h.send).toHaveBeenCalledWith(
      h.manager,
      MEL,
      'role',
      expect.objectContaining({ id: APOLLO }),
      'admin',
    );
    expect(h.recordIn).toHaveBeenCalledWith(
      h.manager,
      actor,
      expect.objectContaining({
        event: 'team.role_changed',
        userId: MEL,
        detail: {
          team: 'Apollo',
          member: 'mel@example.com',
          role: 'admin',
          previous_role: 'member',
        },
      }),
    );
  });

  it("should refuse an admin's change to another admin's role or their own, and a member's to anyone's", async () => {
    await expect(h.members.changeRole(Actors.person(ADAM), APOLLO, ADA, 'member')).rejects.toThrow(
      OwnerOnlyError,
    );
    await expect(h.members.changeRole(Actors.person(ADAM), APOLLO, ADAM, 'member')).rejects.toThrow(
      OwnerOnlyError,
    );
    await expect(h.members.changeRole(Actors.person(MEL), APOLLO, MAX, 'admin')).rejects.toThrow(
      NotTeamManagerError,
    );
    expect(h.roleIn(APOLLO, ADA)).toBe('admin');
    expect(h.roleIn(APOLLO, ADAM)).toBe('admin');
    expect(h.roleIn(APOLLO, MAX)).toBe('member');
    h.expectNothingWritten();
  });

  it("should let only the owner change an admin's role, and no one change the owner's", async () => {
    await h.members.changeRole(Actors.person(OLIVIA), APOLLO, ADA, 'member');
    expect(h.roleIn(APOLLO, ADA)).toBe('member');
    h.recordIn.mockReset();
    h.send.mockReset();
    h.teams.setRole.mockClear();
    h.teams.certifyRole.mockClear();
    await expect(
      h.members.changeRole(Actors.person(OLIVIA), APOLLO, OLIVIA, 'admin'),
    ).rejects.toBeInstanceOf(OwnerRoleError);
    await expect(
      h.members.changeRole(Actors.person(ADAM), APOLLO, OLIVIA, 'member'),
    ).rejects.toBeInstanceOf(OwnerRoleError);
    await expect(
      h.members.changeRole(Actors.person(OLIVIA), APOLLO, STRANGER, 'admin'),
    ).rejects.toBeInstanceOf(MemberNotFoundError);
    expect(h.roleIn(APOLLO, OLIVIA)).toBe('owner');
    h.expectNothingWritten();
  });

  it("should write the acting member's row in the transaction that changes another's role or removes them", async () => {
    await h.members.changeRole(Actors.person(ADAM), APOLLO, MEL, 'admin');
    expect(h.teams.certifyRole.mock.calls).toEqual([[h.manager, APOLLO, ADAM]]);
    await h.members.removeMember(Actors.person(OLIVIA), APOLLO, MAX);
    expect(h.teams.certifyRole.mock.calls.at(-1)).toEqual([h.manager, APOLLO, OLIVIA]);
    // Leaving decides nothing on anyone's role.
    h.teams.certifyRole.mockClear();
    await h.members.leave(Actors.person(ADA), APOLLO);
    expect(h.teams.certifyRole).not.toHaveBeenCalled();
    expect([h.roleIn(APOLLO, MEL), h.roleIn(APOLLO, MAX), h.roleIn(APOLLO, ADA)]).toEqual([
      'admin',
      undefined,
      undefined,
    ]);
  });

  /** Adam (an admin) changes Mel's role, then removes her, the roles under lock read by `locked`. */
  async function expectAdamsChangesRefused(
    locked: () => Promise<Map<number, TeamRole>>,
    error: new (...args: never[]) => Error,
  ) {
    h.teams.lockRoles.mockImplementationOnce(locked);
    await expect(
      h.members.changeRole(Actors.person(ADAM), APOLLO, MEL, 'admin'),
    ).rejects.toBeInstanceOf(error);
    h.teams.lockRoles.mockImplementationOnce(locked);
    await expect(h.members.removeMember(Actors.person(ADAM), APOLLO, MEL)).rejects.toBeInstanceOf(
      error,
    );
  }

  it('should decide on the roles read under lock: an admin made a member meanwhile changes and removes no one', async () => {
    // The first read says admin; by the time the rows are locked another request demoted them.
    const demoted = async () =>
      new Map<number, TeamRole>([
        [ADAM, 'member'],
        [MEL, 'member'],
      ]);
    await expectAdamsChangesRefused(demoted, NotTeamManagerError);
    expect(h.teams.lockRoles).toHaveBeenCalledTimes(2);
    expect(h.roleIn(APOLLO, MEL)).toBe('member');
    h.expectNothingWritten();
  });

  it('should find no team when it was deleted between the first read and the lock, rather than refuse the actor', async () => {
    // A deletion committed after the membership check: under lock the rows and the team are gone.
    await expectAdamsChangesRefused(async () => new Map<number, TeamRole>(), TeamNotFoundError);
    for (const change of [
      () => h.service.deleteTeam(Actors.person(OLIVIA), APOLLO),
      () => h.members.transfer(Actors.person(OLIVIA), APOLLO, ADAM),
      () =>
        h.policies.setPolicy(Actors.person(OLIVIA), APOLLO, {
          requireTwoFactor: false,
          tokenMaxLifetimeDays: 30,
        }),
    ]) {
      h.teams.lockForUpdate.mockImplementationOnce(async () => null);
      await expect(change()).rejects.toBeInstanceOf(TeamNotFoundError);
    }
    h.expectNothingWritten();
  });

  it('should let the owner remove an admin: gone from the team, back in their personal team, told and logged', async () => {
    const actor = Actors.person(OLIVIA);
    await h.members.removeMember(actor, APOLLO, ADAM);
    expect(h.roleIn(APOLLO, ADAM)).toBeUndefined();
    expect(h.currentTeamOf(ADAM)).toBe(personalOf(ADAM));
    expect(h.send).toHaveBeenCalledWith(
      h.manager,
      ADAM,
      'removed',
      expect.objectContaining({ id: APOLLO }),
    );
    expect(h.recordIn).toHaveBeenCalledWith(
      h.manager,
      actor,
      expect.objectContaining({
        event: 'team.member_removed',
        userId: ADAM,
        teamId: APOLLO,
        detail: { team: 'Apollo', member: 'adam@example.com' },
      }),
    );
  });

  it('should refuse an admin removing another admin and a member removing anyone, writing nothing', async () => {
    await expect(h.members.removeMember(Actors.person(ADAM), APOLLO, ADA)).rejects.toThrow(
      OwnerOnlyError,
    );
    await expect(h.members.removeMember(Actors.person(MEL), APOLLO, MAX)).rejects.toThrow(
      NotTeamManagerError,
    );
    expect(h.roleIn(APOLLO, ADA)).toBe('admin');
    expect(h.roleIn(APOLLO, MAX)).toBe('member');
    expect(h.currentTeamOf(ADA)).toBe(APOLLO);
    h.expectNothingWritten();
  });

  it('should refuse to remove the owner, whoever asks, the operator included', async () => {
    for (const actor of [Actors.person(ADAM), Actors.operator()]) {
      await expect(h.members.removeMember(actor, APOLLO, OLIVIA)).rejects.toBeInstanceOf(
        OwnerCannotLeaveError,
      );
    }
    expect(h.roleIn(APOLLO, OLIVIA)).toBe('owner');
    h.expectNothingWritten();
  });

  it('should let a member leave, back to their personal team, logged as leaving and with no removal mail', async () => {
    const actor = Actors.person(MEL);
    await h.members.leave(actor, APOLLO);
    expect(h.roleIn(APOLLO, MEL)).toBeUndefined();
    expect(h.currentTeamOf(MEL)).toBe(personalOf(MEL));
    expect(h.send).not.toHaveBeenCalled();
    expect(h.auditEvents()).toEqual(['team.member_left']);
    expect(h.recordIn.mock.calls[0][1]).toBe(actor);
  });

  it('should refuse the owner leaving their team and anyone leaving a personal team', async () => {
    await expect(h.members.leave(Actors.person(OLIVIA), APOLLO)).rejects.toBeInstanceOf(
      OwnerCannotLeaveError,
    );
    await expect(h.members.leave(Actors.person(MEL), personalOf(MEL))).rejects.toBeInstanceOf(
      PersonalTeamError,
    );
    await expect(
      h.members.removeMember(Actors.operator(), personalOf(MEL), MEL),
    ).rejects.toBeInstanceOf(PersonalTeamError);
    expect(h.roleIn(APOLLO, OLIVIA)).toBe('owner');
    expect(h.roleIn(personalOf(MEL), MEL)).toBe('owner');
    h.expectNothingWritten();
  });

  it('should hand the team to another member on transfer, keeping the old owner as an admin', async () => {
    const actor = Actors.person(OLIVIA);
    const newOwner = await h.members.transfer(actor, APOLLO, MEL);
    expect(newOwner.id).toBe(MEL);
    expect(h.store.teams.get(APOLLO)!.ownerId).toBe(MEL);
    expect(h.roleIn(APOLLO, MEL)).toBe('owner');
    expect(h.roleIn(APOLLO, OLIVIA)).toBe('admin');
    expect(h.send.mock.calls.map(([, to, kind]) => [to, kind])).toEqual(
      expect.arrayContaining([
        [MEL, 'transferred-to'],
        [OLIVIA, 'transferred-away'],
      ]),
    );
    expect(h.recordIn).toHaveBeenCalledWith(
      h.manager,
      actor,
      expect.objectContaining({
        event: 'team.ownership_transferred',
        userId: MEL,
        detail: { team: 'Apollo', new_owner: 'mel@example.com' },
      }),
    );
  });

  it('should refuse a transfer by an admin, of a personal team, or to the owner themselves, writing nothing', async () => {
    await expect(h.members.transfer(Actors.person(ADAM), APOLLO, ADAM)).rejects.toBeInstanceOf(
      OwnerOnlyError,
    );
    await expect(
      h.members.transfer(Actors.person(MEL), personalOf(MEL), OLIVIA),
    ).rejects.toBeInstanceOf(PersonalTeamError);
    await expect(h.members.transfer(Actors.person(OLIVIA), APOLLO, OLIVIA)).rejects.toBeInstanceOf(
      MemberNotFoundError,
    );
    expect(h.store.teams.get(APOLLO)!.ownerId).toBe(OLIVIA);
    h.expectNothingWritten();
  });

  it('should fail a transfer to someone outside the team (or to no one at all) on the locked membership, before the team names them its owner', async () => {
    await expect(
      h.members.transfer(Actors.person(OLIVIA), APOLLO, STRANGER),
    ).rejects.toBeInstanceOf(MemberNotFoundError);
    // Checked under lock inside the unit of work, before the owner's foreign key sees the id.
    expect(h.teams.lockRoles).toHaveBeenCalledWith(h.manager, APOLLO, [STRANGER]);
    expect(h.teams.setOwner).not.toHaveBeenCalled();
    expect(h.run).toHaveBeenCalledTimes(1);
    await expect(h.run.mock.results[0].value).rejects.toBeInstanceOf(MemberNotFoundError);
    expect(h.roleIn(APOLLO, OLIVIA)).toBe('owner');
    expect(h.send).not.toHaveBeenCalled();
    expect(h.recordIn).not.toHaveBeenCalled();
  });

  it('should let the operator add an account by its address, and say when it is unknown or in the team already', async () => {
    const actor = Actors.operator();
    const added = await h.members.addMember(actor, APOLLO, {
      email: 'sam@example.com',
      role: 'admin',
    });
    expect(added.id).toBe(STRANGER);
    expect(h.roleIn(APOLLO, STRANGER)).toBe('admin');
    expect(h.send).toHaveBeenCalledWith(
      h.manager,
      STRANGER,
      'added',
      expect.objectContaining({ id: APOLLO }),
      'admin',
    );
    expect(h.recordIn).toHaveBeenCalledWith(
      h.manager,
      actor,
      expect.objectContaining({ event: 'team.member_joined', userId: STRANGER, teamId: APOLLO }),
    );
    await expect(
      h.members.addMember(actor, APOLLO, { email: 'mel@example.com', role: 'admin' }),
    ).rejects.toBeInstanceOf(AlreadyMemberError);
    expect(h.roleIn(APOLLO, MEL)).toBe('member');
    await expect(
      h.members.addMember(actor, APOLLO, { email: 'nobody@example.com', role: 'member' }),
    ).rejects.toBeInstanceOf(ValidationError);
    await expect(
      h.members.addMember(actor, personalOf(MEL), { email: 'sam@example.com', role: 'member' }),
    ).rejects.toBeInstanceOf(PersonalTeamError);
    expect(h.roleIn(personalOf(MEL), STRANGER)).toBeUndefined();
  });

  it('should add someone joining by invitation with the role offered, but keep the role of someone already in', async () => {
    const joiner = Actors.person(STRANGER);
    await h.members.join(h.manager, joiner, APOLLO, 'member');
    expect(h.roleIn(APOLLO, STRANGER)).toBe('member');
    expect(h.currentTeamOf(STRANGER)).toBe(APOLLO);
    expect(h.recordIn).toHaveBeenCalledWith(
      h.manager,
      joiner,
      expect.objectContaining({
        event: 'team.member_joined',
        detail: { team: 'Apollo', member: 'sam@example.com', role: 'member', via: 'invitation' },
      }),
    );

    h.recordIn.mockReset();
    h.store.users.get(ADAM)!.currentTeamId = personalOf(ADAM);
    await h.members.join(h.manager, Actors.person(ADAM), APOLLO, 'member');
    expect(h.roleIn(APOLLO, ADAM)).toBe('admin');
    expect(h.currentTeamOf(ADAM)).toBe(APOLLO);
    expect(h.recordIn).not.toHaveBeenCalled();
  });
});
