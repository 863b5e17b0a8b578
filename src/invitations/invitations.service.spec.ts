import { beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import { createHash, randomBytes } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log.js';
import { Clock, ManualClock } from '../clock/clock.js';
import { Actors, type Actor } from '../common/actor.js';
import { CONFIG } from '../config/config.module.js';
import { Transactions } from '../database/transactions.js';
import { EmailVerificationService } from '../email-verification/email-verification.service.js';
import { Mailer } from '../mail/mailer.js';
import { Team } from '../teams/team.entity.js';
import {
  AlreadyMemberError,
  NotTeamManagerError,
  PersonalTeamError,
} from '../teams/teams.errors.js';
import { TeamMembersService } from '../teams/team-members.service.js';
import { TeamsService } from '../teams/teams.service.js';
import type { User } from '../users/user.entity.js';
import { UsersRepository } from '../users/users.repository.js';
import {
  AlreadyInvitedError,
  InvitationNotFoundError,
  WrongInviteeError,
} from './invitations.errors.js';
import { InvitationsService, TEAM_INVITATION_MAIL } from './invitations.service.js';
import { TeamInvitation } from './team-invitation.entity.js';

const DAY_MS = 86_400_000;
const NOW = Date.parse('2026-11-24T12:00:00Z');
const TTL_DAYS = 7;

const OLIVIA = 1; // owner of Apollo
const ADAM = 2; // admin of Apollo
const IVY = 7; // invited, confirmed address
const MALLORY = 8; // someone else
const APOLLO = 100;
const PERSONAL = 201;

const apollo = { id: APOLLO, name: 'Apollo', slug: 'apollo', ownerId: OLIVIA, personal: false };
/** Teams other invitations of a test are for. */
const others = [300, 301].map((id) => ({
  id,
  name: `Team ${id}`,
  slug: `team-${id}`,
  ownerId: MALLORY,
  personal: false,
}));
const personal = {
  id: PERSONAL,
  name: "Olivia's Team",
  slug: 'o',
  ownerId: OLIVIA,
  personal: true,
};

const newToken = () => randomBytes(32).toString('base64url');
const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * The invitations table in memory, behind the repository calls the service makes. The rule
 * that a sender must still be the team's owner or an admin (SQL in the service) is `backed`.
 */
function makeStore() {
  const rows = new Map<number, TeamInvitation>();
  /** `${teamId}:${userId}` of the teams' owners and admins. */
  const managers = new Set([`${APOLLO}:${OLIVIA}`, `${APOLLO}:${ADAM}`]);
  const backed = (row: TeamInvitation) => managers.has(`${row.teamId}:${row.invitedById}`);
  const matches = (row: TeamInvitation, where: Partial<TeamInvitation>) =>
    Object.entries(where).every(([key, value]) => row[key as keyof TeamInvitation] === value);
  const copy = (row: TeamInvitation | undefined) => (row ? ({ ...row } as TeamInvitation) : null);
  let nextId = 1;

  /** Params of the service's query builders, by the column each one names. */
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

type Store = ReturnType<typeof makeStore>;

const user = (id: number, name: string, verified = true) =>
  ({
    id,
    name,
    email: `${name.toLowerCase()}@example.com`,
    emailVerifiedAt: verified ? new Date(NOW - 30 * DAY_MS) : null,
    currentTeamId: null,
  }) as User;

describe('InvitationsService', () => {
  let service: InvitationsService;
  let store: Store;
  let clock: ManualClock;
  let users: Map<number, User>;
  const verification = {
    required: true,
    isPending: (u: Pick<User, 'emailVerifiedAt'>) =>
      verification.required && u.emailVerifiedAt === null,
  };
  const getManageableTeam = jest.fn<TeamsService['getManageableTeam']>();
  const isMember = jest.fn<TeamsService['isMember']>();
  const join = jest.fn<TeamMembersService['join']>();
  const certifyRole = jest.fn<TeamsService['certifyRole']>();
  const send = jest.fn<Mailer['send']>();
  const recordAfterCommit = jest.fn<AuditLog['recordAfterCommit']>();

  const statusOf = (id: number) => store.rows.get(id)!.status;

  beforeEach(async () => {
    store = makeStore();
    clock = new ManualClock(NOW);
    verification.required = true;
    users = new Map(
      [user(OLIVIA, 'Olivia'), user(ADAM, 'Adam'), user(IVY, 'Ivy'), user(MALLORY, 'Mallory')].map(
        (u) => [u.id, u],
      ),
    );
    getManageableTeam.mockReset().mockResolvedValue({ ...apollo } as Team);
    isMember.mockReset().mockResolvedValue(false);
    join.mockReset().mockResolvedValue();
    certifyRole.mockReset().mockResolvedValue();
    send.mockReset().mockResolvedValue();
    recordAfterCommit.mockReset();
    const moduleRef = await Test.createTestingModule({
      providers: [
        InvitationsService,
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
        { provide: EmailVerificationService, useValue: verification },
        { provide: AuditLog, useValue: { recordAfterCommit, record: jest.fn() } },
        { provide: Clock, useValue: clock },
        {
          provide: CONFIG,
          useValue: {
            teams: { invitationTtlDays: TTL_DAYS },
            app: { publicUrl: 'https://tessera.test' },
          },
        },
      ],
    }).compile();
    service = moduleRef.get(InvitationsService);
  });

  describe('inviting', () => {
    it('should store a pending invitation from the actor, valid for the configured days, mail it and log it', async () => {
      const actor = Actors.person(ADAM, { ip: '198.51.100.4', userAgent: 'Firefox' });
      const invitation = await service.invite(actor, APOLLO, {
        email: 'new@example.com',
        role: 'admin',
      });
      expect(getManageableTeam).toHaveBeenCalledWith(actor, APOLLO);
      expect(store.rows.get(invitation.id)).toMatchObject({
        teamId: APOLLO,
        email: 'new@example.com',
        role: 'admin',
        status: 'pending',
        invitedById: ADAM,
        tokenHash: null,
        expiresAt: new Date(NOW + TTL_DAYS * DAY_MS),
      });
      expect(send).toHaveBeenCalledWith(store.manager, TEAM_INVITATION_MAIL, 'new@example.com', {
        invitationId: invitation.id,
      });
      expect(recordAfterCommit).toHaveBeenCalledWith(store.manager, actor, {
        event: 'team.member_invited',
        teamId: APOLLO,
        target: { type: 'invitation', id: invitation.id },
        detail: { team: 'Apollo', email: 'new@example.com', role: 'admin' },
      });
    });

    it('should refuse an invitation from a member, to a personal team, or to someone in the team already, storing and mailing nothing', async () => {
      getManageableTeam.mockRejectedValueOnce(new NotTeamManagerError());
      await expect(
        service.invite(Actors.person(MALLORY), APOLLO, { email: 'x@example.com', role: 'member' }),
      ).rejects.toBeInstanceOf(NotTeamManagerError);

      getManageableTeam.mockResolvedValueOnce({ ...personal } as Team);
      await expect(
        service.invite(Actors.person(OLIVIA), PERSONAL, { email: 'x@example.com', role: 'member' }),
      ).rejects.toBeInstanceOf(PersonalTeamError);

      isMember.mockImplementation(async (teamId, userId) => teamId === APOLLO && userId === IVY);
      await expect(
        service.invite(Actors.person(OLIVIA), APOLLO, { email: 'ivy@example.com', role: 'member' }),
      ).rejects.toBeInstanceOf(AlreadyMemberError);

      expect(store.rows.size).toBe(0);
      expect(send).not.toHaveBeenCalled();
      expect(recordAfterCommit).not.toHaveBeenCalled();
      // An address with an account outside the team is invited as any other.
      await expect(
        service.invite(Actors.person(OLIVIA), APOLLO, {
          email: 'mallory@example.com',
          role: 'member',
        }),
      ).resolves.toMatchObject({ status: 'pending' });
    });

    it('should refuse a second invitation while the first is waiting, but renew one that expired or was answered', async () => {
      const { invitation } = store.seed({ email: 'new@example.com' });
      await expect(
        service.invite(Actors.person(OLIVIA), APOLLO, { email: 'new@example.com', role: 'admin' }),
      ).rejects.toBeInstanceOf(AlreadyInvitedError);
      expect(store.rows.get(invitation.id)).toMatchObject({ role: 'member', invitedById: ADAM });
      expect(send).not.toHaveBeenCalled();

      clock.advance(4 * DAY_MS); // past its expiry
      const renewed = await service.invite(Actors.person(OLIVIA), APOLLO, {
        email: 'new@example.com',
        role: 'admin',
      });
      expect(renewed.id).toBe(invitation.id);
      expect(store.rows.size).toBe(1);
      expect(store.rows.get(invitation.id)).toMatchObject({
        role: 'admin',
        invitedById: OLIVIA,
        status: 'pending',
        tokenHash: null,
        expiresAt: new Date(NOW + (4 + TTL_DAYS) * DAY_MS),
      });

      store.rows.get(invitation.id)!.status = 'declined';
      await expect(
        service.invite(Actors.person(ADAM), APOLLO, { email: 'new@example.com', role: 'member' }),
      ).resolves.toMatchObject({ id: invitation.id, status: 'pending' });
    });
  });

  describe('resending and withdrawing', () => {
    it('should give a resent invitation seven more days and a new link, the old one no longer working', async () => {
      const { invitation, token } = store.seed();
      clock.advance(2 * DAY_MS);
      await service.resend(Actors.person(OLIVIA), APOLLO, invitation.id);
      expect(store.rows.get(invitation.id)).toMatchObject({
        tokenHash: null,
        expiresAt: new Date(NOW + (2 + TTL_DAYS) * DAY_MS),
      });
      expect(send).toHaveBeenCalledWith(store.manager, TEAM_INVITATION_MAIL, 'ivy@example.com', {
        invitationId: invitation.id,
      });
      await expect(service.acceptByToken(Actors.person(IVY), token)).rejects.toMatchObject({
        code: 'link_unknown',
      });
    });

    it("should refuse a resend or withdrawal by a member, of another team's invitation, or of an answered one", async () => {
      const { invitation } = store.seed();
      const other = store.seed({ teamId: 300, email: 'other@example.com' }).invitation;
      const answered = store.seed({ email: 'done@example.com', status: 'accepted' }).invitation;
      const before = structuredClone([...store.rows.values()]);

      getManageableTeam.mockRejectedValueOnce(new NotTeamManagerError());
      await expect(
        service.resend(Actors.person(MALLORY), APOLLO, invitation.id),
      ).rejects.toBeInstanceOf(NotTeamManagerError);
      getManageableTeam.mockRejectedValueOnce(new NotTeamManagerError());
      await expect(
        service.revoke(Actors.person(MALLORY), APOLLO, invitation.id),
      ).rejects.toBeInstanceOf(NotTeamManagerError);
      for (const id of [other.id, answered.id]) {
        await expect(service.resend(Actors.person(OLIVIA), APOLLO, id)).rejects.toBeInstanceOf(
          InvitationNotFoundError,
        );
        await expect(service.revoke(Actors.person(OLIVIA), APOLLO, id)).rejects.toBeInstanceOf(
          InvitationNotFoundError,
        );
      }
      expect([...store.rows.values()]).toEqual(before);
      expect(send).not.toHaveBeenCalled();
    });

    it('should withdraw an invitation so that its link no longer works', async () => {
      const { invitation, token } = store.seed();
      clock.advance(60_000);
      await service.revoke(Actors.person(ADAM), APOLLO, invitation.id);
      // The hash stays, so the link can say it was withdrawn.
      expect(store.rows.get(invitation.id)).toMatchObject({
        status: 'revoked',
        tokenHash: hashOf(token),
        respondedAt: new Date(NOW + 60_000),
      });
      await expect(service.acceptByToken(Actors.person(IVY), token)).rejects.toMatchObject({
        code: 'link_withdrawn',
      });
      expect(join).not.toHaveBeenCalled();
    });
  });

  it('should say an invitation answered before it was withdrawn is used, and leave it accepted', async () => {
    const { invitation } = store.seed();
    // Read as waiting by the team page's request, accepted before its update ran.
    store.repo.update.mockImplementationOnce(async () => {
      store.rows.get(invitation.id)!.status = 'accepted';
      return { affected: 0, raw: [], generatedMaps: [] };
    });
    await expect(service.revoke(Actors.person(ADAM), APOLLO, invitation.id)).rejects.toMatchObject({
      code: 'link_used',
    });
    expect(statusOf(invitation.id)).toBe('accepted');
  });

  it('should let the owner invite again an address whose invitation its sender can no longer back', async () => {
    const { invitation } = store.seed({ invitedById: ADAM });
    store.managers.delete(`${APOLLO}:${ADAM}`);
    await service.invite(Actors.person(OLIVIA), APOLLO, {
      email: 'ivy@example.com',
      role: 'admin',
    });
    expect(store.rows.get(invitation.id)).toMatchObject({
      status: 'pending',
      invitedById: OLIVIA,
      role: 'admin',
    });
    expect(send).toHaveBeenCalledTimes(1);
  });

  describe('answering', () => {
    it('should let the addressee accept from the link: accepted, joined with the role offered', async () => {
      const { invitation, token } = store.seed({ role: 'admin' });
      const actor = Actors.person(IVY);
      await expect(service.acceptByToken(actor, token)).resolves.toMatchObject({ id: APOLLO });
      expect(store.rows.get(invitation.id)).toMatchObject({
        status: 'accepted',
        tokenHash: hashOf(token),
        respondedAt: new Date(NOW),
      });
      expect(join).toHaveBeenCalledWith(store.manager, actor, APOLLO, 'admin');
      // The sender's role, on which the acceptance rests, written in the same transaction.
      expect(certifyRole.mock.calls).toEqual([[store.manager, APOLLO, invitation.invitedById]]);
      await expect(service.acceptByToken(actor, token)).rejects.toMatchObject({
        code: 'link_used',
      });
      expect(join).toHaveBeenCalledTimes(1);
      expect(certifyRole).toHaveBeenCalledTimes(1);
    });

    it('should refuse someone signed in with another address, or with the address unconfirmed, changing nothing', async () => {
      const { invitation, token } = store.seed();
      await expect(service.acceptByToken(Actors.person(MALLORY), token)).rejects.toBeInstanceOf(
        WrongInviteeError,
      );
      await expect(service.declineByToken(Actors.person(MALLORY), token)).rejects.toBeInstanceOf(
        WrongInviteeError,
      );
      await expect(
        service.acceptById(Actors.person(MALLORY), invitation.id),
      ).rejects.toBeInstanceOf(InvitationNotFoundError);
      users.get(IVY)!.emailVerifiedAt = null;
      await expect(service.acceptByToken(Actors.person(IVY), token)).rejects.toBeInstanceOf(
        WrongInviteeError,
      );
      expect(store.rows.get(invitation.id)).toMatchObject({
        status: 'pending',
        tokenHash: hashOf(token),
      });
      expect(join).not.toHaveBeenCalled();
      // Without required confirmation, the same person may accept.
      verification.required = false;
      await expect(service.acceptByToken(Actors.person(IVY), token)).resolves.toMatchObject({
        id: APOLLO,
      });
    });

    it('should say a link is unknown, used or expired, as it is', async () => {
      const ivy = Actors.person(IVY);
      await expect(service.acceptByToken(ivy, 'not-a-token')).rejects.toMatchObject({
        code: 'link_unknown',
      });
      await expect(service.acceptByToken(ivy, newToken())).rejects.toMatchObject({
        code: 'link_unknown',
      });
      const declined = store.seed({ status: 'declined' });
      await expect(service.acceptByToken(ivy, declined.token)).rejects.toMatchObject({
        code: 'link_used',
      });
      const expiring = store.seed({ email: 'ivy@example.com', teamId: 300 });
      clock.set(expiring.invitation.expiresAt);
      await expect(service.acceptByToken(ivy, expiring.token)).rejects.toMatchObject({
        code: 'link_expired',
      });
      await expect(service.declineByToken(ivy, expiring.token)).rejects.toMatchObject({
        code: 'link_expired',
      });
      expect(statusOf(expiring.invitation.id)).toBe('pending');
      expect(join).not.toHaveBeenCalled();
    });

    it("should show the link's page with the inviter and whether the address has an account, or say why it cannot", async () => {
      const open = store.seed({ invitedById: OLIVIA });
      await expect(service.view(open.token)).resolves.toMatchObject({
        invitation: { id: open.invitation.id },
        team: { id: APOLLO, name: 'Apollo' },
        inviter: 'Olivia',
        hasAccount: true,
      });
      const stranger = store.seed({ email: 'nobody@example.com', invitedById: OLIVIA });
      await expect(service.view(stranger.token)).resolves.toMatchObject({ hasAccount: false });
      const accepted = store.seed({ email: 'x@example.com', status: 'accepted' });
      await expect(service.view(accepted.token)).rejects.toMatchObject({ code: 'link_used' });
      store.managers.delete(`${APOLLO}:${OLIVIA}`);
      await expect(service.view(open.token)).rejects.toMatchObject({ code: 'link_withdrawn' });
    });

    it('should withdraw, not accept, an invitation whose sender is no longer an owner or admin', async () => {
      const { invitation, token } = store.seed({ invitedById: ADAM });
      store.managers.delete(`${APOLLO}:${ADAM}`);
      await expect(service.acceptByToken(Actors.person(IVY), token)).rejects.toMatchObject({
        code: 'link_withdrawn',
      });
      expect(store.rows.get(invitation.id)).toMatchObject({
        status: 'revoked',
        tokenHash: hashOf(token),
      });
      expect(join).not.toHaveBeenCalled();
      expect(certifyRole).not.toHaveBeenCalled();
    });

    it('should let the addressee decline once, joining nothing', async () => {
      const { invitation, token } = store.seed();
      await expect(service.declineByToken(Actors.person(IVY), token)).resolves.toMatchObject({
        id: APOLLO,
      });
      expect(store.rows.get(invitation.id)).toMatchObject({
        status: 'declined',
        tokenHash: hashOf(token),
      });
      await expect(service.declineById(Actors.person(IVY), invitation.id)).rejects.toMatchObject({
        code: 'link_used',
      });
      await expect(service.acceptById(Actors.person(IVY), invitation.id)).rejects.toMatchObject({
        code: 'link_used',
      });
      expect(statusOf(invitation.id)).toBe('declined');
      expect(join).not.toHaveBeenCalled();
    });

    it('should say an expired invitation is expired when accepted from the dashboard', async () => {
      const { invitation } = store.seed();
      clock.set(invitation.expiresAt);
      await expect(service.acceptById(Actors.person(IVY), invitation.id)).rejects.toMatchObject({
        code: 'link_expired',
      });
      expect(join).not.toHaveBeenCalled();
    });

    it('should let the addressee accept from the dashboard by id', async () => {
      const { invitation } = store.seed();
      await expect(service.acceptById(Actors.person(IVY), invitation.id)).resolves.toMatchObject({
        id: APOLLO,
      });
      expect(statusOf(invitation.id)).toBe('accepted');
      expect(join).toHaveBeenCalledWith(store.manager, Actors.person(IVY), APOLLO, 'member');
    });

    it('should list waiting invitations only for a confirmed address, and not expired or withdrawn ones', async () => {
      const open = store.seed().invitation;
      store.seed({ teamId: 300, expiresAt: new Date(NOW - 1) });
      store.seed({ teamId: 301, invitedById: MALLORY });
      store.seed({ teamId: 302, email: 'mallory@example.com' });
      expect((await service.pendingFor(users.get(IVY)!)).map((i) => i.id)).toEqual([open.id]);
      users.get(IVY)!.emailVerifiedAt = null;
      expect(await service.pendingFor(users.get(IVY)!)).toEqual([]);
    });
  });

  describe('registering from a link', () => {
    const registered = (actor: Actor, id: number, name: string, token?: string) => ({
      actor,
      user: user(id, name, false),
      invitation: token,
    });

    it('should claim the invitation for the new account and join only once its address is confirmed', async () => {
      const { invitation, token } = store.seed();
      const actor = Actors.person(IVY);
      await service.claim(registered(actor, IVY, 'Ivy', token), store.manager);
      expect(store.rows.get(invitation.id)).toMatchObject({ claimedById: IVY, status: 'pending' });
      expect(join).not.toHaveBeenCalled();

      const joined: string[] = [];
      await service.acceptClaimed({ actor, joined }, store.manager);
      expect(statusOf(invitation.id)).toBe('accepted');
      expect(join).toHaveBeenCalledWith(store.manager, actor, APOLLO, 'member');
      // Named for the confirmation's page.
      expect(joined).toEqual(['Apollo']);
    });

    it('should join at once on registering when addresses need no confirmation', async () => {
      verification.required = false;
      const { invitation, token } = store.seed({ role: 'admin' });
      await service.claim(registered(Actors.person(IVY), IVY, 'Ivy', token), store.manager);
      expect(statusOf(invitation.id)).toBe('accepted');
      expect(join).toHaveBeenCalledWith(store.manager, Actors.person(IVY), APOLLO, 'admin');
    });

    it('should claim nothing for a malformed token, another address or an expired invitation', async () => {
      const { invitation, token } = store.seed();
      await service.claim(registered(Actors.person(IVY), IVY, 'Ivy', 'short'), store.manager);
      await service.claim(registered(Actors.person(IVY), IVY, 'Ivy', undefined), store.manager);
      await service.claim(
        registered(Actors.person(MALLORY), MALLORY, 'Mallory', token),
        store.manager,
      );
      clock.set(invitation.expiresAt);
      await service.claim(registered(Actors.person(IVY), IVY, 'Ivy', token), store.manager);
      expect(store.rows.get(invitation.id)).toMatchObject({ claimedById: null, status: 'pending' });
    });

    it('should on confirmation skip claimed invitations that expired or whose sender lost the right to invite', async () => {
      const expired = store.seed({ claimedById: IVY, expiresAt: new Date(NOW - 1) }).invitation;
      const orphan = store.seed({ teamId: 300, claimedById: IVY, invitedById: MALLORY }).invitation;
      const good = store.seed({ teamId: 301, claimedById: IVY, invitedById: MALLORY }).invitation;
      store.managers.add(`301:${MALLORY}`);
      const actor = Actors.person(IVY);
      const joined: string[] = [];
      await service.acceptClaimed({ actor, joined }, store.manager);
      expect(joined).toEqual(['Team 301']);
      expect(statusOf(expired.id)).toBe('pending');
      expect(statusOf(orphan.id)).toBe('revoked');
      expect(statusOf(good.id)).toBe('accepted');
      expect(join.mock.calls).toEqual([[store.manager, actor, 301, 'member']]);
    });
  });
});
