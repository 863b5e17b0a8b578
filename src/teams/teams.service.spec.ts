import { beforeEach, describe, expect, it, jest } from '@jest/globals';
import { AbilityCatalog, BUILT_IN_ABILITIES } from '../config/abilities.config.js';
import { Test } from '@nestjs/testing';
import type { EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log.js';
import { Actors, type Actor } from '../common/actor.js';
import { ValidationError } from '../common/errors/domain.error.js';
import { Transactions } from '../database/transactions.js';
import type { User } from '../users/user.entity.js';
import { UsersRepository } from '../users/users.repository.js';
import type { TeamMember, TeamRole } from './team-member.entity.js';
import { TeamNotices } from './team-notices.js';
import { Events } from '../events/events.js';
import type { Team } from './team.entity.js';
import {
  AlreadyMemberError,
  MemberNotFoundError,
  NotTeamManagerError,
  NotTeamMemberError,
  OwnerCannotLeaveError,
  OwnerOnlyError,
  OwnerRoleError,
  PersonalTeamError,
  TeamNotFoundError,
} from './teams.errors.js';
import { TeamsRepository } from './teams.repository.js';
import { TeamMembersService } from './team-members.service.js';
import { TeamPoliciesService } from './team-policies.service.js';
import { TeamsService } from './teams.service.js';

/** Apollo (team 100): Olivia owns it, Adam and Ada are admins, Mel and Max members. */
const OLIVIA = 1;
const ADAM = 2;
const ADA = 3;
const MEL = 4;
const MAX = 5;
const STRANGER = 6;
const APOLLO = 100;
/** Each user's personal team is 200 + their id. */
const personalOf = (userId: number) => 200 + userId;

const NAMES: Record<number, string> = {
  [OLIVIA]: 'Olivia',
  [ADAM]: 'Adam',
  [ADA]: 'Ada',
  [MEL]: 'Mel',
  [MAX]: 'Max',
  [STRANGER]: 'Sam',
};

/** Teams, memberships and users in memory, behind the repository methods the service calls. */
function makeStore() {
  const teams = new Map<number, Team>();
  const members = new Map<number, Map<number, TeamRole>>();
  const users = new Map<number, User>();
  for (const [idText, name] of Object.entries(NAMES)) {
    const id = Number(idText);
    users.set(id, {
      id,
      name,
      email: `${name.toLowerCase()}@example.com`,
      emailVerifiedAt: new Date('2026-01-01T00:00:00Z'),
      currentTeamId: id === STRANGER ? personalOf(id) : APOLLO,
    } as User);
    teams.set(personalOf(id), {
      id: personalOf(id),
      name: `${name}'s Team`,
      slug: `${name.toLowerCase()}s-team`,
      ownerId: id,
      personal: true,
    } as Team);
    members.set(personalOf(id), new Map([[id, 'owner']]));
  }
  teams.set(APOLLO, {
    id: APOLLO,
    name: 'Apollo',
    slug: 'apollo',
    ownerId: OLIVIA,
    personal: false,
  } as Team);
  members.set(
    APOLLO,
    new Map<number, TeamRole>([
      [OLIVIA, 'owner'],
      [ADAM, 'admin'],
      [ADA, 'admin'],
      [MEL, 'member'],
      [MAX, 'member'],
    ]),
  );
  return { teams, members, users };
}

type Store = ReturnType<typeof makeStore>;

function fakeTeamsRepository(store: Store) {
  const copy = (team: Team | undefined) => (team ? { ...team } : null);
  const personalTeamOf = (userId: number) =>
    [...store.teams.values()].find((t) => t.ownerId === userId && t.personal);
  let nextId = 500;
  return {
    findById: jest.fn(async (id: number) => copy(store.teams.get(id))),
    findBySlug: jest.fn(async (slug: string) =>
      copy([...store.teams.values()].find((t) => t.slug === slug)),
    ),
    findCurrentOf: jest.fn(async (userId: number) =>
      copy(store.teams.get(store.users.get(userId)?.currentTeamId ?? -1)),
    ),
    findForMember: jest.fn(async (teamId: number, userId: number) => {
      const role = store.members.get(teamId)?.get(userId);
      return role ? { team: copy(store.teams.get(teamId))!, role } : null;
    }),
    findMembershipsOf: jest.fn(async (userId: number) =>
      [...store.members.entries()]
        .filter(([, roles]) => roles.has(userId))
        .map(([teamId, roles]) => ({
          team: copy(store.teams.get(teamId))!,
          role: roles.get(userId)!,
        })),
    ),
    findMembers: jest.fn(async (teamId: number) =>
      [...(store.members.get(teamId) ?? new Map<number, TeamRole>()).entries()].map(
        ([userId, role]) => ({ teamId, userId, role, user: store.users.get(userId) }) as TeamMember,
      ),
    ),
    insertWithOwner: jest.fn(
      async (_m: EntityManager, ownerId: number, name: string, personal: boolean) => {
        const team = { id: nextId++, name, slug: name.toLowerCase(), ownerId, personal } as Team;
        store.teams.set(team.id, team);
        store.members.set(team.id, new Map([[ownerId, 'owner']]));
        return { ...team };
      },
    ),
    insertMember: jest.fn(
      async (_m: EntityManager, teamId: number, userId: number, role: TeamRole) => {
        const roles = store.members.get(teamId)!;
        if (roles.has(userId)) {
          throw Object.assign(new Error('UNIQUE constraint failed'), {
            code: 'SQLITE_CONSTRAINT_PRIMARYKEY',
          });
        }
        roles.set(userId, role);
      },
    ),
    lockRoles: jest.fn(async (_m: EntityManager, teamId: number, userIds: number[]) => {
      const roles = store.members.get(teamId) ?? new Map<number, TeamRole>();
      return new Map(userIds.filter((id) => roles.has(id)).map((id) => [id, roles.get(id)!]));
    }),
    certifyRole: jest.fn(async (_m: EntityManager, _teamId: number, _userId: number) => undefined),
    deleteMember: jest.fn(async (_m: EntityManager, teamId: number, userId: number) =>
      store.members.get(teamId)!.delete(userId),
    ),
    resetCurrentTeam: jest.fn(async (_m: EntityManager, userId: number, teamId: number) => {
      const user = store.users.get(userId)!;
      if (user.currentTeamId === teamId) user.currentTeamId = personalTeamOf(userId)?.id ?? null;
    }),
    setRole: jest.fn(async (_m: EntityManager, teamId: number, userId: number, role: TeamRole) => {
      const roles = store.members.get(teamId)!;
      if (!roles.has(userId)) return false;
      roles.set(userId, role);
      return true;
    }),
    setOwner: jest.fn(async (_m: EntityManager, teamId: number, from: number, to: number) => {
      const team = store.teams.get(teamId)!;
      if (team.ownerId !== from) return false;
      team.ownerId = to;
      return true;
    }),
    rename: jest.fn(async (_m: EntityManager, team: Team, name: string) => {
      Object.assign(store.teams.get(team.id)!, { name, slug: name.toLowerCase() });
      return Object.assign(team, { name, slug: name.toLowerCase() });
    }),
    deleteTeam: jest.fn(async (_m: EntityManager, teamId: number) => {
      store.members.delete(teamId);
      for (const user of store.users.values()) {
        if (user.currentTeamId === teamId) user.currentTeamId = personalTeamOf(user.id)!.id;
      }
      store.teams.delete(teamId);
    }),
    setPolicy: jest.fn(
      async (_m: EntityManager, teamId: number, policy: Partial<Team>) =>
        void Object.assign(store.teams.get(teamId)!, policy),
    ),
    hasTwoFactor: jest.fn(async () => true),
    findMembersWithoutTwoFactor: jest.fn(async () => [] as number[]),
    lockForUpdate: jest.fn(async (_m: EntityManager, teamId: number) =>
      copy(store.teams.get(teamId)),
    ),
  };
}

function fakeUsersRepository(store: Store) {
  return {
    findById: jest.fn(async (id: number) => store.users.get(id) ?? null),
    findByEmail: jest.fn(
      async (email: string) => [...store.users.values()].find((u) => u.email === email) ?? null,
    ),
    lockForUpdate: jest.fn(async () => undefined),
    setCurrentTeamIfMember: jest.fn(async (_m: EntityManager, userId: number, teamId: number) => {
      if (!store.members.get(teamId)?.has(userId)) return false;
      store.users.get(userId)!.currentTeamId = teamId;
      return true;
    }),
  };
}

describe('TeamsService, TeamMembersService and TeamPoliciesService', () => {
  let service: TeamsService;
  let members: TeamMembersService;
  let policies: TeamPoliciesService;
  let store: Store;
  let teams: ReturnType<typeof fakeTeamsRepository>;
  let users: ReturnType<typeof fakeUsersRepository>;
  const manager = { fake: 'manager' } as unknown as EntityManager;
  const run = jest.fn(async (work: (m: EntityManager) => Promise<unknown>) => work(manager));
  const recordAfterCommit = jest.fn<AuditLog['recordAfterCommit']>();
  const send = jest.fn<TeamNotices['send']>();
  const publish = jest.fn<Events['publish']>();

  const roleIn = (teamId: number, userId: number) => store.members.get(teamId)?.get(userId);
  const currentTeamOf = (userId: number) => store.users.get(userId)!.currentTeamId;
  const auditEvents = () => recordAfterCommit.mock.calls.map(([, , entry]) => entry.event);

  /** A refused action: no repository write, no mail, no audit event. */
  function expectNothingWritten() {
    for (const write of [
      teams.insertWithOwner,
      teams.insertMember,
      teams.certifyRole,
      teams.deleteMember,
      teams.resetCurrentTeam,
      teams.setRole,
      teams.setOwner,
      teams.rename,
      teams.deleteTeam,
      users.setCurrentTeamIfMember,
    ]) {
      expect(write).not.toHaveBeenCalled();
    }
    expect(send).not.toHaveBeenCalled();
    expect(recordAfterCommit).not.toHaveBeenCalled();
  }

  beforeEach(async () => {
    store = makeStore();
    teams = fakeTeamsRepository(store);
    users = fakeUsersRepository(store);
    run.mockClear();
    recordAfterCommit.mockReset();
    send.mockReset().mockResolvedValue();
    publish.mockReset().mockResolvedValue();
    const moduleRef = await Test.createTestingModule({
      providers: [
        TeamsService,
        TeamMembersService,
        TeamPoliciesService,
        { provide: AbilityCatalog, useValue: new AbilityCatalog(BUILT_IN_ABILITIES) },
        { provide: TeamsRepository, useValue: teams },
        { provide: UsersRepository, useValue: users },
        { provide: Transactions, useValue: { run, afterCommit: jest.fn() } },
        { provide: AuditLog, useValue: { recordAfterCommit, record: jest.fn() } },
        { provide: TeamNotices, useValue: { send } },
        { provide: Events, useValue: { publish } },
      ],
    }).compile();
    service = moduleRef.get(TeamsService);
    members = moduleRef.get(TeamMembersService);
    policies = moduleRef.get(TeamPoliciesService);
  });

  it('should make the creator the owner of a new team, switch them to it and log it as theirs', async () => {
    const actor: Actor = {
      kind: 'token',
      userId: STRANGER,
      tokenId: 9,
      client: { ip: '203.0.113.7', userAgent: 'curl' },
    };
    const team = await service.createTeam(actor, { name: 'Borealis' });
    expect(team).toMatchObject({ name: 'Borealis', ownerId: STRANGER, personal: false });
    expect(roleIn(team.id, STRANGER)).toBe('owner');
    expect(currentTeamOf(STRANGER)).toBe(team.id);
    expect(recordAfterCommit).toHaveBeenCalledTimes(1);
    expect(recordAfterCommit).toHaveBeenCalledWith(
      manager,
      actor,
      expect.objectContaining({ event: 'team.created', teamId: team.id }),
    );
  });

  it('should refuse to show a team by its slug to someone outside it, as if it did not exist, but not to the operator', async () => {
    await expect(service.getBySlug(Actors.person(STRANGER), 'apollo')).rejects.toBeInstanceOf(
      NotTeamMemberError,
    );
    await expect(service.getBySlug(Actors.person(MEL), 'apollo')).resolves.toMatchObject({
      id: APOLLO,
    });
    await expect(service.getBySlug(Actors.operator(), 'apollo')).resolves.toMatchObject({
      id: APOLLO,
    });
    await expect(service.getBySlug(Actors.operator(), 'nowhere')).rejects.toBeInstanceOf(
      TeamNotFoundError,
    );
  });

  it('should refuse to switch someone to a team they are not in, and leave their current team as it was', async () => {
    await expect(service.switchTeam(Actors.person(STRANGER), APOLLO)).rejects.toBeInstanceOf(
      NotTeamMemberError,
    );
    expect(currentTeamOf(STRANGER)).toBe(personalOf(STRANGER));
    await expect(service.switchTeam(Actors.person(MEL), personalOf(MEL))).resolves.toMatchObject({
      id: personalOf(MEL),
    });
    expect(currentTeamOf(MEL)).toBe(personalOf(MEL));
  });

  it('should offer the owner every other member, an admin only the members, and a member no one to manage', async () => {
    const manageable = async (viewer: number) =>
      (await service.getForMember(Actors.person(viewer), APOLLO)).members
        .filter((m) => m.removable && m.roleEditable)
        .map((m) => m.user.id)
        .sort();
    expect(await manageable(OLIVIA)).toEqual([ADAM, ADA, MEL, MAX]);
    expect(await manageable(ADAM)).toEqual([MEL, MAX]);
    expect(await manageable(MEL)).toEqual([]);
    const details = await service.getForMember(Actors.person(ADAM), APOLLO);
    expect(details.role).toBe('admin');
    // What may be removed is what may be re-roled: one rule for both.
    expect(details.members.every((m) => m.removable === m.roleEditable)).toBe(true);
    await expect(service.getForMember(Actors.person(STRANGER), APOLLO)).rejects.toBeInstanceOf(
      NotTeamMemberError,
    );
  });

  it('should let an admin rename the team and log the old and new names against the actor given, once', async () => {
    const actor = Actors.person(ADAM, { ip: '198.51.100.4', userAgent: 'Firefox' }, 'sess-1');
    const renamed = await service.rename(actor, APOLLO, { name: 'Artemis' });
    expect(renamed.name).toBe('Artemis');
    expect(store.teams.get(APOLLO)!.name).toBe('Artemis');
    expect(recordAfterCommit).toHaveBeenCalledWith(manager, actor, {
      event: 'team.renamed',
      teamId: APOLLO,
      target: { type: 'team', id: APOLLO },
      detail: { name: 'Artemis', previous_name: 'Apollo' },
    });
    // The same name again is no rename worth an event.
    await service.rename(Actors.person(OLIVIA), APOLLO, { name: 'Artemis' });
    expect(recordAfterCommit).toHaveBeenCalledTimes(1);
  });

  it('should refuse a rename by a member and by someone outside the team, writing nothing', async () => {
    await expect(
      service.rename(Actors.person(MEL), APOLLO, { name: 'Mine now' }),
    ).rejects.toBeInstanceOf(NotTeamManagerError);
    await expect(
      service.rename(Actors.person(STRANGER), APOLLO, { name: 'Mine now' }),
    ).rejects.toBeInstanceOf(NotTeamMemberError);
    expect(store.teams.get(APOLLO)!.name).toBe('Apollo');
    expectNothingWritten();
  });

  it('should let an admin make a member an admin, tell the member, and log the previous role', async () => {
    const actor = Actors.person(ADAM);
    const member = await members.changeRole(actor, APOLLO, MEL, 'admin');
    expect(member.id).toBe(MEL);
    expect(roleIn(APOLLO, MEL)).toBe('admin');
    expect(send).toHaveBeenCalledWith(
      manager,
      MEL,
      'role',
      expect.objectContaining({ id: APOLLO }),
      'admin',
    );
    expect(recordAfterCommit).toHaveBeenCalledWith(
      manager,
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
    await expect(members.changeRole(Actors.person(ADAM), APOLLO, ADA, 'member')).rejects.toThrow(
      OwnerOnlyError,
    );
    await expect(members.changeRole(Actors.person(ADAM), APOLLO, ADAM, 'member')).rejects.toThrow(
      OwnerOnlyError,
    );
    await expect(members.changeRole(Actors.person(MEL), APOLLO, MAX, 'admin')).rejects.toThrow(
      NotTeamManagerError,
    );
    expect(roleIn(APOLLO, ADA)).toBe('admin');
    expect(roleIn(APOLLO, ADAM)).toBe('admin');
    expect(roleIn(APOLLO, MAX)).toBe('member');
    expectNothingWritten();
  });

  it("should let only the owner change an admin's role, and no one change the owner's", async () => {
    await members.changeRole(Actors.person(OLIVIA), APOLLO, ADA, 'member');
    expect(roleIn(APOLLO, ADA)).toBe('member');
    recordAfterCommit.mockReset();
    send.mockReset();
    teams.setRole.mockClear();
    teams.certifyRole.mockClear();
    await expect(
      members.changeRole(Actors.person(OLIVIA), APOLLO, OLIVIA, 'admin'),
    ).rejects.toBeInstanceOf(OwnerRoleError);
    await expect(
      members.changeRole(Actors.person(ADAM), APOLLO, OLIVIA, 'member'),
    ).rejects.toBeInstanceOf(OwnerRoleError);
    await expect(
      members.changeRole(Actors.person(OLIVIA), APOLLO, STRANGER, 'admin'),
    ).rejects.toBeInstanceOf(MemberNotFoundError);
    expect(roleIn(APOLLO, OLIVIA)).toBe('owner');
    expectNothingWritten();
  });

  it("should write the acting member's row in the transaction that changes another's role or removes them", async () => {
    await members.changeRole(Actors.person(ADAM), APOLLO, MEL, 'admin');
    expect(teams.certifyRole.mock.calls).toEqual([[manager, APOLLO, ADAM]]);
    await members.removeMember(Actors.person(OLIVIA), APOLLO, MAX);
    expect(teams.certifyRole.mock.calls.at(-1)).toEqual([manager, APOLLO, OLIVIA]);
    // Leaving decides nothing on anyone's role.
    teams.certifyRole.mockClear();
    await members.leave(Actors.person(ADA), APOLLO);
    expect(teams.certifyRole).not.toHaveBeenCalled();
    expect([roleIn(APOLLO, MEL), roleIn(APOLLO, MAX), roleIn(APOLLO, ADA)]).toEqual([
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
    teams.lockRoles.mockImplementationOnce(locked);
    await expect(
      members.changeRole(Actors.person(ADAM), APOLLO, MEL, 'admin'),
    ).rejects.toBeInstanceOf(error);
    teams.lockRoles.mockImplementationOnce(locked);
    await expect(members.removeMember(Actors.person(ADAM), APOLLO, MEL)).rejects.toBeInstanceOf(
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
    expect(teams.lockRoles).toHaveBeenCalledTimes(2);
    expect(roleIn(APOLLO, MEL)).toBe('member');
    expectNothingWritten();
  });

  it('should find no team when it was deleted between the first read and the lock, rather than refuse the actor', async () => {
    // A deletion committed after the membership check: under lock the rows and the team are gone.
    await expectAdamsChangesRefused(async () => new Map<number, TeamRole>(), TeamNotFoundError);
    for (const change of [
      () => service.deleteTeam(Actors.person(OLIVIA), APOLLO),
      () => members.transfer(Actors.person(OLIVIA), APOLLO, ADAM),
      () =>
        policies.setPolicy(Actors.person(OLIVIA), APOLLO, {
          requireTwoFactor: false,
          tokenMaxLifetimeDays: 30,
        }),
    ]) {
      teams.lockForUpdate.mockImplementationOnce(async () => null);
      await expect(change()).rejects.toBeInstanceOf(TeamNotFoundError);
    }
    expectNothingWritten();
  });

  it("should publish the owner's change of the policy, with the policy before it, in the transaction that saves it, and nothing when nothing changed", async () => {
    const actor = Actors.person(OLIVIA);
    const input = { requireTwoFactor: false, tokenMaxLifetimeDays: 30 };
    await policies.setPolicy(actor, APOLLO, input);
    expect(publish).toHaveBeenCalledWith(manager, 'team.policy_changed', {
      actor,
      team: { id: APOLLO, name: 'Apollo' },
      previous: { requireTwoFactor: false, tokenMaxLifetimeDays: null, allowedAbilities: null },
      policy: { requireTwoFactor: false, tokenMaxLifetimeDays: 30, allowedAbilities: null },
    });
    publish.mockClear();
    await policies.setPolicy(actor, APOLLO, input);
    expect(publish).not.toHaveBeenCalled();
    // Shown before it is saved: checked as saving checks it, nothing written.
    await expect(policies.proposePolicy(Actors.person(ADAM), APOLLO, input)).rejects.toThrow(
      OwnerOnlyError,
    );
    await expect(
      policies.proposePolicy(actor, APOLLO, { ...input, tokenMaxLifetimeDays: 7 }),
    ).resolves.toMatchObject({ policy: { tokenMaxLifetimeDays: 7 } });
    // The two saves wrote; the proposals did not.
    expect(teams.setPolicy).toHaveBeenCalledTimes(2);
  });

  it('should let the owner remove an admin: gone from the team, back in their personal team, told and logged', async () => {
    const actor = Actors.person(OLIVIA);
    await members.removeMember(actor, APOLLO, ADAM);
    expect(roleIn(APOLLO, ADAM)).toBeUndefined();
    expect(currentTeamOf(ADAM)).toBe(personalOf(ADAM));
    expect(send).toHaveBeenCalledWith(
      manager,
      ADAM,
      'removed',
      expect.objectContaining({ id: APOLLO }),
    );
    expect(recordAfterCommit).toHaveBeenCalledWith(
      manager,
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
    await expect(members.removeMember(Actors.person(ADAM), APOLLO, ADA)).rejects.toThrow(
      OwnerOnlyError,
    );
    await expect(members.removeMember(Actors.person(MEL), APOLLO, MAX)).rejects.toThrow(
      NotTeamManagerError,
    );
    expect(roleIn(APOLLO, ADA)).toBe('admin');
    expect(roleIn(APOLLO, MAX)).toBe('member');
    expect(currentTeamOf(ADA)).toBe(APOLLO);
    expectNothingWritten();
  });

  it('should refuse to remove the owner, whoever asks, the operator included', async () => {
    for (const actor of [Actors.person(ADAM), Actors.operator()]) {
      await expect(members.removeMember(actor, APOLLO, OLIVIA)).rejects.toBeInstanceOf(
        OwnerCannotLeaveError,
      );
    }
    expect(roleIn(APOLLO, OLIVIA)).toBe('owner');
    expectNothingWritten();
  });

  it('should let a member leave, back to their personal team, logged as leaving and with no removal mail', async () => {
    const actor = Actors.person(MEL);
    await members.leave(actor, APOLLO);
    expect(roleIn(APOLLO, MEL)).toBeUndefined();
    expect(currentTeamOf(MEL)).toBe(personalOf(MEL));
    expect(send).not.toHaveBeenCalled();
    expect(auditEvents()).toEqual(['team.member_left']);
    expect(recordAfterCommit.mock.calls[0][1]).toBe(actor);
  });

  it('should refuse the owner leaving their team and anyone leaving a personal team', async () => {
    await expect(members.leave(Actors.person(OLIVIA), APOLLO)).rejects.toBeInstanceOf(
      OwnerCannotLeaveError,
    );
    await expect(members.leave(Actors.person(MEL), personalOf(MEL))).rejects.toBeInstanceOf(
      PersonalTeamError,
    );
    await expect(
      members.removeMember(Actors.operator(), personalOf(MEL), MEL),
    ).rejects.toBeInstanceOf(PersonalTeamError);
    expect(roleIn(APOLLO, OLIVIA)).toBe('owner');
    expect(roleIn(personalOf(MEL), MEL)).toBe('owner');
    expectNothingWritten();
  });

  it('should hand the team to another member on transfer, keeping the old owner as an admin', async () => {
    const actor = Actors.person(OLIVIA);
    const newOwner = await members.transfer(actor, APOLLO, MEL);
    expect(newOwner.id).toBe(MEL);
    expect(store.teams.get(APOLLO)!.ownerId).toBe(MEL);
    expect(roleIn(APOLLO, MEL)).toBe('owner');
    expect(roleIn(APOLLO, OLIVIA)).toBe('admin');
    expect(send.mock.calls.map(([, to, kind]) => [to, kind])).toEqual(
      expect.arrayContaining([
        [MEL, 'transferred-to'],
        [OLIVIA, 'transferred-away'],
      ]),
    );
    expect(recordAfterCommit).toHaveBeenCalledWith(
      manager,
      actor,
      expect.objectContaining({
        event: 'team.ownership_transferred',
        userId: MEL,
        detail: { team: 'Apollo', new_owner: 'mel@example.com' },
      }),
    );
  });

  it('should refuse a transfer by an admin, of a personal team, or to the owner themselves, writing nothing', async () => {
    await expect(members.transfer(Actors.person(ADAM), APOLLO, ADAM)).rejects.toBeInstanceOf(
      OwnerOnlyError,
    );
    await expect(
      members.transfer(Actors.person(MEL), personalOf(MEL), OLIVIA),
    ).rejects.toBeInstanceOf(PersonalTeamError);
    await expect(members.transfer(Actors.person(OLIVIA), APOLLO, OLIVIA)).rejects.toBeInstanceOf(
      MemberNotFoundError,
    );
    expect(store.teams.get(APOLLO)!.ownerId).toBe(OLIVIA);
    expectNothingWritten();
  });

  it('should fail a transfer to someone outside the team (or to no one at all) on the locked membership, before the team names them its owner', async () => {
    await expect(members.transfer(Actors.person(OLIVIA), APOLLO, STRANGER)).rejects.toBeInstanceOf(
      MemberNotFoundError,
    );
    // Checked under lock inside the unit of work, before the owner's foreign key sees the id.
    expect(teams.lockRoles).toHaveBeenCalledWith(manager, APOLLO, [STRANGER]);
    expect(teams.setOwner).not.toHaveBeenCalled();
    expect(run).toHaveBeenCalledTimes(1);
    await expect(run.mock.results[0].value).rejects.toBeInstanceOf(MemberNotFoundError);
    expect(roleIn(APOLLO, OLIVIA)).toBe('owner');
    expect(send).not.toHaveBeenCalled();
    expect(recordAfterCommit).not.toHaveBeenCalled();
  });

  it('should let only the owner delete a team, never a personal one, and move everyone who worked in it', async () => {
    await expect(service.deleteTeam(Actors.person(ADAM), APOLLO)).rejects.toBeInstanceOf(
      OwnerOnlyError,
    );
    await expect(service.deleteTeam(Actors.person(MEL), personalOf(MEL))).rejects.toBeInstanceOf(
      PersonalTeamError,
    );
    expectNothingWritten();

    const actor = Actors.person(OLIVIA);
    await expect(service.deleteTeam(actor, APOLLO)).resolves.toMatchObject({ id: APOLLO });
    expect(store.teams.has(APOLLO)).toBe(false);
    for (const id of [OLIVIA, ADAM, ADA, MEL, MAX]) expect(currentTeamOf(id)).toBe(personalOf(id));
    expect(recordAfterCommit).toHaveBeenCalledWith(
      manager,
      actor,
      expect.objectContaining({
        event: 'team.deleted',
        teamId: APOLLO,
        detail: { name: 'Apollo' },
      }),
    );
  });

  it('should refuse a deletion when the team changed hands before its row was locked', async () => {
    teams.lockForUpdate.mockImplementationOnce(
      async () => ({ ...store.teams.get(APOLLO)!, ownerId: MEL }) as Team,
    );
    await expect(service.deleteTeam(Actors.person(OLIVIA), APOLLO)).rejects.toBeInstanceOf(
      OwnerOnlyError,
    );
    expect(store.teams.has(APOLLO)).toBe(true);
    expectNothingWritten();
  });

  it('should let the operator add an account by its address, and say when it is unknown or in the team already', async () => {
    const actor = Actors.operator();
    const added = await members.addMember(actor, APOLLO, {
      email: 'sam@example.com',
      role: 'admin',
    });
    expect(added.id).toBe(STRANGER);
    expect(roleIn(APOLLO, STRANGER)).toBe('admin');
    expect(send).toHaveBeenCalledWith(
      manager,
      STRANGER,
      'added',
      expect.objectContaining({ id: APOLLO }),
      'admin',
    );
    expect(recordAfterCommit).toHaveBeenCalledWith(
      manager,
      actor,
      expect.objectContaining({ event: 'team.member_joined', userId: STRANGER, teamId: APOLLO }),
    );
    await expect(
      members.addMember(actor, APOLLO, { email: 'mel@example.com', role: 'admin' }),
    ).rejects.toBeInstanceOf(AlreadyMemberError);
    expect(roleIn(APOLLO, MEL)).toBe('member');
    await expect(
      members.addMember(actor, APOLLO, { email: 'nobody@example.com', role: 'member' }),
    ).rejects.toBeInstanceOf(ValidationError);
    await expect(
      members.addMember(actor, personalOf(MEL), { email: 'sam@example.com', role: 'member' }),
    ).rejects.toBeInstanceOf(PersonalTeamError);
    expect(roleIn(personalOf(MEL), STRANGER)).toBeUndefined();
  });

  it('should add someone joining by invitation with the role offered, but keep the role of someone already in', async () => {
    const joiner = Actors.person(STRANGER);
    await members.join(manager, joiner, APOLLO, 'member');
    expect(roleIn(APOLLO, STRANGER)).toBe('member');
    expect(currentTeamOf(STRANGER)).toBe(APOLLO);
    expect(recordAfterCommit).toHaveBeenCalledWith(
      manager,
      joiner,
      expect.objectContaining({
        event: 'team.member_joined',
        detail: { team: 'Apollo', member: 'sam@example.com', role: 'member', via: 'invitation' },
      }),
    );

    recordAfterCommit.mockReset();
    store.users.get(ADAM)!.currentTeamId = personalOf(ADAM);
    await members.join(manager, Actors.person(ADAM), APOLLO, 'member');
    expect(roleIn(APOLLO, ADAM)).toBe('admin');
    expect(currentTeamOf(ADAM)).toBe(APOLLO);
    expect(recordAfterCommit).not.toHaveBeenCalled();
  });
});
