import { jest } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import { createHash, randomBytes } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { AuditLog } from '../../src/audit/audit-log.js';
import { Clock, ManualClock } from '../../src/clock/clock.js';
import { CONFIG } from '../../src/config/config.module.js';
import { Transactions } from '../../src/database/transactions.js';
import { EmailVerificationService } from '../../src/email-verification/email-verification.service.js';
import { InvitationResponsesService } from '../../src/invitations/invitation-responses.service.js';
import { InvitationsService } from '../../src/invitations/invitations.service.js';
import { TeamInvitation } from '../../src/invitations/team-invitation.entity.js';
import { Mailer } from '../../src/mail/mailer.js';
import { Team } from '../../src/teams/team.entity.js';
import { TeamMembersService } from '../../src/teams/team-members.service.js';
import { TeamsService } from '../../src/teams/teams.service.js';
import type { User } from '../../src/users/user.entity.js';
import { UsersRepository } from '../../src/users/users.repository.js';

export const DAY_MS = 86_400_000;
export const NOW = Date.parse('2026-11-24T12:00:00Z');
export const TTL_DAYS = 7;

export const OLIVIA = 1; // owner of Apollo
export const ADAM = 2; // admin of Apollo
export const IVY = 7; // invited, confirmed address
export const MALLORY = 8; // someone else
export const APOLLO = 100;
export const PERSONAL = 201;

const apollo = { id: APOLLO, name: 'Apollo', slug: 'apollo', ownerId: OLIVIA, personal: false };
/** Teams other invitations of a test are for. */
const others = [300, 301].map((id) => ({
  id,
  name: `Team ${id}`,
  slug: `team-${id}`,
  ownerId: MALLORY,
  personal: false,
}));
export const personal = {
  id: PERSONAL,
  name: "Olivia's Team",
  slug: 'o',
  ownerId: OLIVIA,
  personal: true,
};

export const newToken = () => randomBytes(32).toString('base64url');
export const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * The invitations table in memory, behind the repository calls the services make. The rule
 * that a sender must still be the team's owner or an admin (SQL in the services) is `backed`.
 */
export function makeStore() {
  const rows = new Map<number, TeamInvitation>();
  /** `${teamId}:${userId}` of the teams' owners and admins. */
  const managers = new Set([`${APOLLO}:${OLIVIA}`, `${APOLLO}:${ADAM}`]);
  const backed = (row: TeamInvitation) => managers.has(`${row.teamId}:${row.invitedById}`);
  const matches = (row: TeamInvitation, where: Partial<TeamInvitation>) =>
    Object.entries(where).every(([key, value]) => row[key as keyof TeamInvitation] === value);
  const copy = (row: TeamInvitation | undefined) => (row ? ({ ...row } as TeamInvitation) : null);
  let nextId = 1;

  /** Params of the services' query builders, by the column each one names. */
  const COLUMNS: Record<string, keyof TeamInvitation> = {
    id: 'id',
    teamId: 'teamId',
    email: 'email',
    pending: 'status',
  };
  const queryBuilder = () => {
    const where: Record<string, unknown> = {};
    let patch: Partial<TeamInvitation> | undefined;
    let senderCheck = false;
    const selected = () =>
      [...rows.values()].filter(
        (row) =>
          Object.entries(where).every(([param, value]) => row[COLUMNS[param]] === value) &&
          (!senderCheck || backed(row)),
      );
    const qb = {
      update: () => qb,
      set: (values: Partial<TeamInvitation>) => ((patch = values), qb),
      innerJoinAndSelect: () => qb,
      leftJoinAndSelect: () => qb,
      orderBy: () => qb,
      where: (_sql: string, params: Record<string, unknown>) => {
        for (const param of Object.keys(params)) {
          if (!COLUMNS[param]) throw new Error(`unexpected parameter ${param}`);
        }
        Object.assign(where, params);
        return qb;
      },
      andWhere: (sql: string) => {
        if (!sql.includes("m.role IN ('owner', 'admin')")) throw new Error(`unexpected ${sql}`);
        senderCheck = true;
        return qb;
      },
      execute: async () => {
        const hit = selected();
        for (const row of hit) Object.assign(row, patch);
        return { affected: hit.length };
      },
      getExists: async () => selected().length > 0,
      getMany: async () =>
        selected().map((row) => ({ ...row, team: row.teamId === APOLLO ? apollo : personal })),
    };
    return qb;
  };

  const repo = {
    findOneBy: jest.fn(async (where: Partial<TeamInvitation>) =>
      copy([...rows.values()].find((row) => matches(row, where))),
    ),
    findOne: jest.fn(async ({ where }: { where: Partial<TeamInvitation> }) =>
      copy([...rows.values()].find((row) => matches(row, where))),
    ),
    findBy: jest.fn(async (where: Partial<TeamInvitation>) =>
      [...rows.values()].filter((row) => matches(row, where)).map((row) => copy(row)!),
    ),
    create: jest.fn((fields: Partial<TeamInvitation>) => ({ ...fields }) as TeamInvitation),
    save: jest.fn(async (invitation: TeamInvitation) => {
      if (invitation.id === undefined) invitation.id = nextId++;
      rows.set(invitation.id, { ...invitation });
      return invitation;
    }),
    update: jest.fn(async (where: Partial<TeamInvitation>, values: Partial<TeamInvitation>) => {
      const hit = [...rows.values()].filter((row) => matches(row, where));
      for (const row of hit) Object.assign(row, values);
      return { affected: hit.length };
    }),
    createQueryBuilder: jest.fn(queryBuilder),
  };
  const teamRepo = {
    findOneByOrFail: jest.fn(async ({ id }: { id: number }) => {
      const team = [apollo, personal, ...others].find((t) => t.id === id);
      if (!team) throw new Error('EntityNotFound');
      return { ...team } as Team;
    }),
  };
  const manager = {
    // One write transaction at a time, as SQLite runs them: nothing to lock.
    connection: { options: { type: 'better-sqlite3' } },
    getRepository: (entity: unknown) => {
      if (entity === TeamInvitation) return repo;
      if (entity === Team) return teamRepo;
      throw new Error('unexpected entity');
    },
  } as unknown as EntityManager;

  /** Stores an invitation as the service would have left it once mailed (with a link). */
  function seed(fields: Partial<TeamInvitation> = {}): {
    invitation: TeamInvitation;
    token: string;
  } {
    const token = newToken();
    const invitation = {
      id: nextId++,
      teamId: APOLLO,
      email: 'ivy@example.com',
      role: 'member',
      invitedById: ADAM,
      tokenHash: hashOf(token),
      status: 'pending',
      claimedById: null,
      expiresAt: new Date(NOW + 3 * DAY_MS),
      respondedAt: null,
      createdAt: new Date(NOW - DAY_MS),
      ...fields,
    } as TeamInvitation;
    rows.set(invitation.id, invitation);
    return { invitation, token };
  }

  return { rows, managers, repo, manager, seed };
}

export type Store = ReturnType<typeof makeStore>;

export const user = (id: number, name: string, verified = true) =>
  ({
    id,
    name,
    email: `${name.toLowerCase()}@example.com`,
    emailVerifiedAt: verified ? new Date(NOW - 30 * DAY_MS) : null,
    currentTeamId: null,
  }) as User;

/**
 * The invitation services (`InvitationsService`, `InvitationResponsesService`) over the table in
 * memory, with the team services, the transaction, the mailer, the audit log and the clock as
 * stand-ins: what the invitations feature's unit specs share. `reset()` before each test gives a
 * fresh table, people and clock; the mocks are the same objects, reset.
 */
export class InvitationServices {
  invitations!: InvitationsService;
  responses!: InvitationResponsesService;
  store!: Store;
  clock!: ManualClock;
  users!: Map<number, User>;
  readonly verification = {
    required: true,
    isPending: (u: Pick<User, 'emailVerifiedAt'>) =>
      this.verification.required && u.emailVerifiedAt === null,
  };
  readonly getManageableTeam = jest.fn<TeamsService['getManageableTeam']>();
  readonly isMember = jest.fn<TeamsService['isMember']>();
  readonly join = jest.fn<TeamMembersService['join']>();
  readonly certifyRole = jest.fn<TeamsService['certifyRole']>();
  readonly send = jest.fn<Mailer['send']>();
  readonly recordIn = jest.fn<AuditLog['recordIn']>();

  async reset(): Promise<void> {
    const store = makeStore();
    this.store = store;
    this.clock = new ManualClock(NOW);
    this.verification.required = true;
    const users = new Map(
      [user(OLIVIA, 'Olivia'), user(ADAM, 'Adam'), user(IVY, 'Ivy'), user(MALLORY, 'Mallory')].map(
        (u) => [u.id, u],
      ),
    );
    this.users = users;
    this.getManageableTeam.mockReset().mockResolvedValue({ ...apollo } as Team);
    this.isMember.mockReset().mockResolvedValue(false);
    this.join.mockReset().mockResolvedValue();
    this.certifyRole.mockReset().mockResolvedValue();
    this.send.mockReset().mockResolvedValue();
    this.recordIn.mockReset();
    const { getManageableTeam, isMember, certifyRole, join, send, recordIn } = this;
    const moduleRef = await Test.createTestingModule({
      providers: [
        InvitationsService,
        InvitationResponsesService,
        { provide: getDataSourceToken(), useValue: { manager: store.manager } },
        { provide: TeamsService, useValue: { getManageableTeam, isMember, certifyRole } },
        { provide: TeamMembersService, useValue: { join } },
        {
          provide: UsersRepository,
          useValue: {
            findById: async (id: number) => users.get(id) ?? null,
            findByEmail: async (email: string) =>
              [...users.values()].find((u) => u.email === email) ?? null,
          },
        },
        {
          provide: Transactions,
          useValue: {
            run: (work: (m: EntityManager) => Promise<unknown>) => work(store.manager),
            afterCommit: jest.fn(),
          },
        },
        { provide: Mailer, useValue: { send, render: jest.fn() } },
        { provide: EmailVerificationService, useValue: this.verification },
        { provide: AuditLog, useValue: { recordIn, record: jest.fn() } },
        { provide: Clock, useValue: this.clock },
        {
          provide: CONFIG,
          useValue: {
            teams: { invitationTtlDays: TTL_DAYS },
            app: { publicUrl: 'https://tessera.test' },
          },
        },
      ],
    }).compile();
    this.invitations = moduleRef.get(InvitationsService);
    this.responses = moduleRef.get(InvitationResponsesService);
  }

  statusOf(id: number) {
    return this.store.rows.get(id)!.status;
  }
}
