import { expect, jest } from '@jest/globals';
import { Test } from '@nestjs/testing';
import type { EntityManager } from 'typeorm';
import { AuditLog } from '../../src/audit/audit-log.js';
import { AbilityCatalog, BUILT_IN_ABILITIES } from '../../src/config/abilities.config.js';
import { Transactions } from '../../src/database/transactions.js';
import { Events } from '../../src/events/events.js';
import type { TeamMember, TeamRole } from '../../src/teams/team-member.entity.js';
import { TeamMembersService } from '../../src/teams/team-members.service.js';
import { TeamNotices } from '../../src/teams/team-notices.js';
import { TeamPoliciesService } from '../../src/teams/team-policies.service.js';
import type { Team } from '../../src/teams/team.entity.js';
import { TeamsRepository } from '../../src/teams/teams.repository.js';
import { TeamsService } from '../../src/teams/teams.service.js';
import type { User } from '../../src/users/user.entity.js';
import { UsersRepository } from '../../src/users/users.repository.js';

/** Apollo (team 100): Olivia owns it, Adam and Ada are admins, Mel and Max members. */
export const OLIVIA = 1;
export const ADAM = 2;
export const ADA = 3;
export const MEL = 4;
export const MAX = 5;
export const STRANGER = 6;
export const APOLLO = 100;
/** Each user's personal team is 200 + their id. */
export const personalOf = (userId: number) => 200 + userId;

const NAMES: Record<number, string> = {
  [OLIVIA]: 'Olivia',
  [ADAM]: 'Adam',
  [ADA]: 'Ada',
  [MEL]: 'Mel',
  [MAX]: 'Max',
  [STRANGER]: 'Sam',
};

/** Teams, memberships and users in memory, behind the repository methods the service calls. */
export function makeStore() {
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

export type Store = ReturnType<typeof makeStore>;

export function fakeTeamsRepository(store: Store) {
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
    isServiceAccountOf: jest.fn(
      async (userId: number, teamId: number) =>
        store.users.get(userId)?.serviceAccountTeamId === teamId,
    ),
    hasTwoFactor: jest.fn(async () => true),
    findMembersWithoutTwoFactor: jest.fn(async () => [] as number[]),
    lockForUpdate: jest.fn(async (_m: EntityManager, teamId: number) =>
      copy(store.teams.get(teamId)),
    ),
  };
}

export function fakeUsersRepository(store: Store) {
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

/**
 * The team services (`TeamsService`, `TeamMembersService`, `TeamPoliciesService`) over the
 * store in memory, with the transaction, the audit log, the notices and the events as mocks:
 * what the teams feature's unit specs share. `reset()` before each test gives a fresh store.
 */
export class TeamServices {
  readonly manager = { fake: 'manager' } as unknown as EntityManager;
  readonly run = jest.fn(async (work: (m: EntityManager) => Promise<unknown>) =>
    work(this.manager),
  );
  readonly recordIn = jest.fn<AuditLog['recordIn']>();
  readonly send = jest.fn<TeamNotices['send']>();
  readonly publish = jest.fn<Events['publish']>();
  store!: Store;
  teams!: ReturnType<typeof fakeTeamsRepository>;
  users!: ReturnType<typeof fakeUsersRepository>;
  service!: TeamsService;
  members!: TeamMembersService;
  policies!: TeamPoliciesService;

  async reset(): Promise<void> {
    this.store = makeStore();
    this.teams = fakeTeamsRepository(this.store);
    this.users = fakeUsersRepository(this.store);
    this.run.mockClear();
    this.recordIn.mockReset();
    this.send.mockReset().mockResolvedValue();
    this.publish.mockReset().mockResolvedValue();
    const moduleRef = await Test.createTestingModule({
      providers: [
        TeamsService,
        TeamMembersService,
        TeamPoliciesService,
        { provide: AbilityCatalog, useValue: new AbilityCatalog(BUILT_IN_ABILITIES) },
        { provide: TeamsRepository, useValue: this.teams },
        { provide: UsersRepository, useValue: this.users },
        { provide: Transactions, useValue: { run: this.run, afterCommit: jest.fn() } },
        {
          provide: AuditLog,
          useValue: { recordIn: this.recordIn, record: jest.fn() },
        },
        { provide: TeamNotices, useValue: { send: this.send } },
        { provide: Events, useValue: { publish: this.publish } },
      ],
    }).compile();
    this.service = moduleRef.get(TeamsService);
    this.members = moduleRef.get(TeamMembersService);
    this.policies = moduleRef.get(TeamPoliciesService);
  }

  roleIn(teamId: number, userId: number): TeamRole | undefined {
    return this.store.members.get(teamId)?.get(userId);
  }

  currentTeamOf(userId: number): number | null {
    return this.store.users.get(userId)!.currentTeamId;
  }

  auditEvents(): string[] {
    return this.recordIn.mock.calls.map(([, , entry]) => entry.event);
  }

  /** A refused action: no repository write, no mail, no audit event. */
  expectNothingWritten(): void {
    for (const write of [
      this.teams.insertWithOwner,
      this.teams.insertMember,
      this.teams.certifyRole,
      this.teams.deleteMember,
      this.teams.resetCurrentTeam,
      this.teams.setRole,
      this.teams.setOwner,
      this.teams.rename,
      this.teams.deleteTeam,
      this.users.setCurrentTeamIfMember,
    ]) {
      expect(write).not.toHaveBeenCalled();
    }
    expect(this.send).not.toHaveBeenCalled();
    expect(this.recordIn).not.toHaveBeenCalled();
  }
}
