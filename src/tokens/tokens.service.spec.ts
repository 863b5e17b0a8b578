import { describe, expect, it, beforeEach, jest } from '@jest/globals';
import type { EntityManager } from 'typeorm';
import { ValidationError } from '../common/errors/domain.error.js';
import { EmailNotVerifiedError } from '../email-verification/email-verification.errors.js';
import type { Ability } from './abilities.js';
import { hashToken } from './token-format.js';
import { AmbiguousTokenNameError, TokenNotFoundError, TokenRevokedError } from './tokens.errors.js';
import type { TokensService } from './tokens.service.js';
import { TokenServices } from '../../test/support/token-services.js';

describe('TokensService token lifecycle', () => {
  const h = new TokenServices();
  const {
    DAY_MS,
    now,
    person,
    manager,
    clock,
    run,
    insert,
    findForOwner,
    findUnrevokedForOwnerByName,
    updateDetails,
    revokeForOwner,
    findCurrentTeamOf,
    findTeamOfMember,
    insertPin,
    assertConfirmed,
    notify,
    recordIn,
    current,
    stored,
  } = h;
  let service: TokensService;

  beforeEach(async () => {
    await h.reset();
    service = h.tokens;
  });

  describe('create', () => {
    it("should keep the abilities in the catalog's order, and refuse one the catalog does not offer, when creating a token", async () => {
      await expect(
        service.create(person, {
          name: 'ci',
          abilities: ['team:read', 'invoices:write' as Ability],
          expiresInDays: 30,
        }),
      ).rejects.toMatchObject({
        code: 'validation_failed',
        fields: { abilities: expect.stringContaining('"invoices:write"') },
      });
      expect(insert).not.toHaveBeenCalled();
      const created = await service.create(person, {
        name: 'ci',
        abilities: ['team:read', 'user:read'],
        expiresInDays: 30,
      });
      expect(insert).toHaveBeenCalledWith(
        manager,
        expect.objectContaining({ abilities: ['user:read', 'team:read'] }),
      );
      expect(created.token.abilities).toEqual(['user:read', 'team:read']);
      await service.create(person, { name: 'ci', abilities: ['team:read'], expiresInDays: 30 });
      expect(insert).toHaveBeenLastCalledWith(
        manager,
        expect.objectContaining({ abilities: ['team:read'] }),
      );
    });

    it("should give the token the catalog's default abilities when none are asked for", async () => {
      await service.create(person, { name: 'ci', expiresInDays: 30 });
      expect(insert).toHaveBeenCalledWith(
        manager,
        expect.objectContaining({ abilities: ['user:read', 'team:read'] }),
      );
    });

    it("should count the token's lifetime from the clock's time when creating it", async () => {
      clock.advance(5 * 3_600_000);
      const created = await service.create(person, { name: 'ci', expiresInDays: 30 });
      const expiresAt = new Date(now + 5 * 3_600_000 + 30 * DAY_MS);
      const createdAt = new Date(now + 5 * 3_600_000);
      expect(insert).toHaveBeenCalledWith(
        manager,
        expect.objectContaining({ expiresAt, createdAt }),
      );
      expect(created.token).toMatchObject({ expiresAt, createdAt, status: 'active' });
      await service.create(person, { name: 'ci', expiresOn: '2027-01-01' });
      expect(insert).toHaveBeenLastCalledWith(
        manager,
        expect.objectContaining({ expiresAt: new Date('2027-01-01T00:00:00Z') }),
      );
    });

    it('should refuse a token that never expires, inserting nothing, when tokens must expire here', async () => {
      await expect(service.create(person, { name: 'ci' })).rejects.toBeInstanceOf(ValidationError);
      expect(run).not.toHaveBeenCalled();
      expect(insert).not.toHaveBeenCalled();
    });

    it('should refuse a lifetime past the maximum of the team the token will act in, inserting nothing', async () => {
      const team = (id: number, name: string, days: number) => ({
        id,
        name,
        policy: { requireTwoFactor: false, tokenMaxLifetimeDays: days, allowedAbilities: null },
      });
      findCurrentTeamOf.mockResolvedValue(team(3, 'Acme', 14));
      findTeamOfMember.mockResolvedValue(team(4, 'Tight', 7));
      const refusals: [Parameters<TokensService['create']>[1], Record<string, string>][] = [
        [
          { name: 'ci', expiresInDays: 30 },
          { expires_in_days: 'Acme allows tokens of at most 14 days.' },
        ],
        [
          { name: 'ci' },
          { expires_in_days: 'Acme allows tokens of at most 14 days: choose an expiry.' },
        ],
        [
          { name: 'ci', expiresInDays: 14, teamId: 4 },
          { expires_in_days: 'Tight allows tokens of at most 7 days.' },
        ],
      ];
      for (const [input, fields] of refusals) {
        await expect(service.create(person, input)).rejects.toThrow(
          expect.objectContaining({ fields }),
        );
      }
      expect(insert).not.toHaveBeenCalled();
      await service.create(person, { name: 'ci', expiresInDays: 14 });
      await service.create(person, { name: 'ci', expiresInDays: 7, teamId: 4 });
      expect(insert).toHaveBeenCalledTimes(2);
      expect(insertPin).toHaveBeenCalledTimes(1);
    });

    it("should refuse a token, inserting nothing and telling no one, while the owner's address is unconfirmed", async () => {
      assertConfirmed.mockRejectedValue(new EmailNotVerifiedError());
      await expect(
        service.create(person, { name: 'ci', expiresInDays: 30 }),
      ).rejects.toBeInstanceOf(EmailNotVerifiedError);
      expect(assertConfirmed).toHaveBeenCalledWith(person);
      expect(insert).not.toHaveBeenCalled();
      expect(notify).not.toHaveBeenCalled();
      expect(recordIn).not.toHaveBeenCalled();
    });

    it('should store only the hash of the value it shows once', async () => {
      const { plaintext, token } = await service.create(person, {
        name: 'ci',
        expiresInDays: 30,
      });
      expect(insert).toHaveBeenCalledWith(manager, {
        userId: 1,
        name: 'ci',
        tokenHash: hashToken(plaintext),
        lastFour: plaintext.slice(-4),
        abilities: ['user:read', 'team:read'],
        expiresAt: new Date(now + 30 * DAY_MS),
        lifetimeDays: 30,
        createdAt: new Date(now),
      });
      expect(token.hint.endsWith(plaintext.slice(-4))).toBe(true);
    });

    it('should tell the owner and record token.created in the transaction that creates it', async () => {
      await service.create(person, { name: 'ci', abilities: ['team:read'], expiresInDays: 7 });
      expect(notify).toHaveBeenCalledWith(manager, 1, 'token-created', 'ci');
      expect(recordIn).toHaveBeenCalledWith(manager, person, {
        event: 'token.created',
        userId: 1,
        tokenId: 12,
        target: { type: 'token', id: 12 },
        detail: {
          name: 'ci',
          abilities: 'team:read',
          expires_at: new Date(now + 7 * DAY_MS).toISOString(),
        },
      });
    });
  });

  describe('createForServiceAccount', () => {
    const acme = {
      id: 3,
      name: 'Acme',
      policy: { requireTwoFactor: true, tokenMaxLifetimeDays: 30, allowedAbilities: ['team:read'] },
    };
    const bot = { id: 40, name: 'deploy-bot' };

    it("should pin the token to the account's team, name its maker, decide first in the transaction, and record it in the team's audit log", async () => {
      const decided: string[] = [];
      const decide = jest.fn(async (_m: EntityManager) => {
        decided.push(`insert calls: ${insert.mock.calls.length}`);
      });
      await service.createForServiceAccount(
        person,
        bot,
        acme,
        { name: 'ci', abilities: ['team:read'], expiresInDays: 30 },
        decide,
      );
      expect(decide).toHaveBeenCalledWith(manager);
      expect(decided).toEqual(['insert calls: 0']);
      expect(insert).toHaveBeenCalledWith(
        manager,
        expect.objectContaining({ userId: 40, createdById: 1, lifetimeDays: 30 }),
      );
      expect(insertPin).toHaveBeenCalledWith(manager, 12, 3);
      expect(notify).toHaveBeenCalledWith(manager, 40, 'token-created', 'ci');
      expect(recordIn).toHaveBeenCalledWith(
        manager,
        person,
        expect.objectContaining({
          event: 'token.created',
          userId: 40,
          teamId: 3,
          detail: expect.objectContaining({ service_account: 'deploy-bot', pinned_to: 'Acme' }),
        }),
      );
    });

    it("should refuse, inserting nothing and deciding nothing, a lifetime or abilities the account's team does not allow", async () => {
      const decide = jest.fn(async (_m: EntityManager) => {});
      await expect(
        service.createForServiceAccount(
          person,
          bot,
          acme,
          { name: 'ci', abilities: ['team:read'], expiresInDays: 90 },
          decide,
        ),
      ).rejects.toMatchObject({
        fields: { expires_in_days: 'Acme allows tokens of at most 30 days.' },
      });
      await expect(
        service.createForServiceAccount(
          person,
          bot,
          acme,
          { name: 'ci', abilities: ['user:read'], expiresInDays: 7 },
          decide,
        ),
      ).rejects.toMatchObject({ fields: { abilities: 'Acme does not allow tokens "user:read".' } });
      expect(decide).not.toHaveBeenCalled();
      expect(insert).not.toHaveBeenCalled();
    });
  });

  describe('update', () => {
    it('should rename a token and change its abilities, recording the previous name', async () => {
      const view = await service.update(person, 7, {
        name: 'desktop',
        abilities: ['team:read', 'user:read'],
      });
      expect(findForOwner).toHaveBeenCalledWith(1, 7, manager);
      expect(updateDetails).toHaveBeenCalledWith(manager, 1, 7, {
        name: 'desktop',
        abilities: ['user:read', 'team:read'],
      });
      expect(view).toMatchObject({ id: 7, name: 'desktop', hint: `tsr_…${current.lastFour}` });
      expect(recordIn).toHaveBeenCalledWith(manager, person, {
        event: 'token.updated',
        userId: 1,
        tokenId: 7,
        target: { type: 'token', id: 7 },
        detail: { name: 'desktop', previous_name: 'laptop', abilities: 'user:read team:read' },
      });
    });

    it('should record no previous name when only the abilities change', async () => {
      const view = await service.update(person, 7, { name: 'laptop', abilities: ['user:read'] });
      expect(view.abilities).toEqual(['user:read']);
      expect(recordIn).toHaveBeenCalledWith(
        manager,
        person,
        expect.objectContaining({ detail: { name: 'laptop', abilities: 'user:read' } }),
      );
    });

    it('should refuse to change a revoked token', async () => {
      findForOwner.mockResolvedValue(stored({ revokedAt: new Date(now - DAY_MS) }));
      await expect(
        service.update(person, 7, { name: 'desktop', abilities: ['user:read'] }),
      ).rejects.toBeInstanceOf(TokenRevokedError);
      expect(updateDetails).not.toHaveBeenCalled();
      expect(recordIn).not.toHaveBeenCalled();
    });

    it('should refuse, and record nothing, when the token was revoked after it was read', async () => {
      updateDetails.mockResolvedValue(false);
      await expect(
        service.update(person, 7, { name: 'desktop', abilities: ['user:read'] }),
      ).rejects.toBeInstanceOf(TokenRevokedError);
      expect(recordIn).not.toHaveBeenCalled();
    });

    it("should answer not found for another user's token", async () => {
      findForOwner.mockResolvedValue(null);
      await expect(
        service.update(person, 99, { name: 'desktop', abilities: ['user:read'] }),
      ).rejects.toBeInstanceOf(TokenNotFoundError);
      expect(findForOwner).toHaveBeenCalledWith(1, 99, manager);
      expect(updateDetails).not.toHaveBeenCalled();
    });
  });

  describe('revoke', () => {
    it("should revoke the token at the clock's time and record it", async () => {
      await expect(service.revoke(person, 7)).resolves.toMatchObject({
        alreadyRevoked: false,
        token: { id: 7, status: 'revoked', revokedAt: new Date(now) },
      });
      expect(revokeForOwner).toHaveBeenCalledWith(manager, 1, 7, new Date(now));
      expect(recordIn).toHaveBeenCalledWith(manager, person, {
        event: 'token.revoked',
        userId: 1,
        tokenId: 7,
        target: { type: 'token', id: 7 },
        detail: { name: 'laptop' },
      });
    });

    it('should keep the first time and say alreadyRevoked when the token is revoked twice', async () => {
      const first = new Date(now - DAY_MS);
      findForOwner.mockResolvedValue(stored({ revokedAt: first }));
      await expect(service.revoke(person, 7)).resolves.toMatchObject({
        alreadyRevoked: true,
        token: { status: 'revoked', revokedAt: first },
      });
      expect(run).not.toHaveBeenCalled();
      expect(revokeForOwner).not.toHaveBeenCalled();
      expect(recordIn).not.toHaveBeenCalled();
    });

    it('should say alreadyRevoked, and record nothing, when another revocation got there first', async () => {
      const first = new Date(now - 1000);
      findForOwner
        .mockResolvedValueOnce(stored())
        .mockResolvedValueOnce(stored({ revokedAt: first }));
      revokeForOwner.mockResolvedValue(false);
      await expect(service.revoke(person, 7)).resolves.toMatchObject({
        alreadyRevoked: true,
        token: { status: 'revoked', revokedAt: first },
      });
      expect(recordIn).not.toHaveBeenCalled();
    });

    it("should answer not found for another user's token", async () => {
      findForOwner.mockResolvedValue(null);
      await expect(service.revoke(person, 99)).rejects.toBeInstanceOf(TokenNotFoundError);
      expect(findForOwner).toHaveBeenCalledWith(1, 99);
      expect(revokeForOwner).not.toHaveBeenCalled();
    });
  });

  describe('revokeByName', () => {
    it('should revoke the one active token with that name', async () => {
      findUnrevokedForOwnerByName.mockResolvedValue([stored()]);
      await expect(service.revokeByName(person, 'laptop')).resolves.toMatchObject({
        alreadyRevoked: false,
        token: { id: 7 },
      });
      expect(findUnrevokedForOwnerByName).toHaveBeenCalledWith(1, 'laptop');
      expect(revokeForOwner).toHaveBeenCalledWith(manager, 1, 7, new Date(now));
    });

    it('should refuse a name that several active tokens share, naming them, and revoke nothing', async () => {
      findUnrevokedForOwnerByName.mockResolvedValue([stored(), stored({ id: 8 })]);
      const revoked = service.revokeByName(person, 'laptop');
      await expect(revoked).rejects.toBeInstanceOf(AmbiguousTokenNameError);
      await expect(revoked).rejects.toMatchObject({
        code: 'ambiguous_token_name',
        message: expect.stringContaining('ids 7, 8'),
      });
      expect(revokeForOwner).not.toHaveBeenCalled();
    });

    it('should answer not found when no active token has that name', async () => {
      await expect(service.revokeByName(person, 'phone')).rejects.toBeInstanceOf(
        TokenNotFoundError,
      );
      expect(revokeForOwner).not.toHaveBeenCalled();
    });
  });
});
