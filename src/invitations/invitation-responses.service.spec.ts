import { beforeEach, describe, expect, it } from '@jest/globals';
import type { ManualClock } from '../clock/clock.js';
import { Actors, type Actor } from '../common/actor.js';
import type { User } from '../users/user.entity.js';
import {
  ADAM,
  APOLLO,
  hashOf,
  InvitationServices,
  IVY,
  MALLORY,
  newToken,
  NOW,
  OLIVIA,
  type Store,
  user,
} from '../../test/support/invitation-services.js';
import type { InvitationResponsesService } from './invitation-responses.service.js';
import { InvitationNotFoundError, WrongInviteeError } from './invitations.errors.js';

describe('InvitationResponsesService', () => {
  const h = new InvitationServices();
  const { verification, join, certifyRole } = h;
  let service: InvitationResponsesService;
  let store: Store;
  let clock: ManualClock;
  let users: Map<number, User>;
  const statusOf = (id: number) => h.statusOf(id);

  beforeEach(async () => {
    await h.reset();
    ({ store, clock, users, responses: service } = h);
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
