import { beforeEach, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../clock/clock.js';
import { Actors } from '../common/actor.js';
import type { Team } from '../teams/team.entity.js';
import {
  AlreadyMemberError,
  NotTeamManagerError,
  PersonalTeamError,
} from '../teams/teams.errors.js';
import {
  ADAM,
  APOLLO,
  DAY_MS,
  hashOf,
  InvitationServices,
  IVY,
  MALLORY,
  NOW,
  OLIVIA,
  PERSONAL,
  personal,
  type Store,
  TTL_DAYS,
} from '../../test/support/invitation-services.js';
import type { InvitationResponsesService } from './invitation-responses.service.js';
import { AlreadyInvitedError, InvitationNotFoundError } from './invitations.errors.js';
import { type InvitationsService, TEAM_INVITATION_MAIL } from './invitations.service.js';

describe('InvitationsService', () => {
  const h = new InvitationServices();
  const { getManageableTeam, isMember, join, send, recordIn } = h;
  let service: InvitationsService;
  let responses: InvitationResponsesService;
  let store: Store;
  let clock: ManualClock;
  const statusOf = (id: number) => h.statusOf(id);

  beforeEach(async () => {
    await h.reset();
    ({ store, clock, invitations: service, responses } = h);
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
      expect(recordIn).toHaveBeenCalledWith(store.manager, actor, {
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
      expect(recordIn).not.toHaveBeenCalled();
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
      await expect(responses.acceptByToken(Actors.person(IVY), token)).rejects.toMatchObject({
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
      await expect(responses.acceptByToken(Actors.person(IVY), token)).rejects.toMatchObject({
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
});
