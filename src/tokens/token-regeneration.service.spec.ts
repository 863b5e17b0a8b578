import { describe, expect, it, beforeEach } from '@jest/globals';
import { hashToken } from './token-format.js';
import { valueVersionOf } from './token.view.js';
import type { TokenRegenerationService } from './token-regeneration.service.js';
import { TokenChangedError, TokenRevokedError } from './tokens.errors.js';
import { TokenServices } from '../../test/support/token-services.js';

describe('TokenRegenerationService', () => {
  const h = new TokenServices();
  const {
    DAY_MS,
    now,
    person,
    manager,
    findForOwner,
    replaceValue,
    findPin,
    findCurrentTeamOf,
    recordIn,
    current,
    stored,
  } = h;
  let service: TokenRegenerationService;

  beforeEach(async () => {
    await h.reset();
    service = h.regeneration;
  });

  describe('regenerate', () => {
    const acme = {
      id: 3,
      name: 'Acme',
      policy: { requireTwoFactor: false, tokenMaxLifetimeDays: 14, allowedAbilities: null },
    };

    it("should cut the kept lifetime to the pinned team's maximum, and refuse a longer one asked for", async () => {
      findPin.mockResolvedValue({ team: acme });
      await service.regenerate(person, 7, 0);
      expect(replaceValue).toHaveBeenCalledWith(
        manager,
        1,
        7,
        current.hash,
        expect.objectContaining({ expiresAt: new Date(now + 14 * DAY_MS) }),
      );
      replaceValue.mockClear();
      for (const days of [30, null]) {
        await expect(service.regenerate(person, 7, 0, undefined, days)).rejects.toThrow(
          'Acme allows tokens of at most 14 days',
        );
      }
      expect(replaceValue).not.toHaveBeenCalled();
      await service.regenerate(person, 7, 0, undefined, 7);
      expect(replaceValue).toHaveBeenCalledWith(
        manager,
        1,
        7,
        current.hash,
        expect.objectContaining({ expiresAt: new Date(now + 7 * DAY_MS) }),
      );
    });

    it("should hold a token following its current team to that team's maximum, and the deployment's", async () => {
      findCurrentTeamOf.mockResolvedValue(acme);
      await expect(service.regenerate(person, 7, 0, undefined, 30)).rejects.toThrow(
        'Acme allows tokens of at most 14 days.',
      );
      expect(replaceValue).not.toHaveBeenCalled();
      findCurrentTeamOf.mockResolvedValue({
        ...acme,
        policy: { ...acme.policy, tokenMaxLifetimeDays: null },
      });
      await service.regenerate(person, 7, 0, undefined, 90);
      expect(replaceValue).toHaveBeenCalledWith(
        manager,
        1,
        7,
        current.hash,
        expect.objectContaining({ expiresAt: new Date(now + 90 * DAY_MS) }),
      );
      await expect(service.regenerate(person, 7, 0, undefined, 365)).rejects.toThrow(
        'Tokens may live at most 90 days.',
      );
    });

    it('should keep the replaced value working for the grace period and count the lifetime again from now', async () => {
      const token = stored();
      findForOwner.mockResolvedValue(token);
      const { plaintext, token: view } = await service.regenerate(
        person,
        7,
        15,
        valueVersionOf(token),
      );
      const next = {
        tokenHash: hashToken(plaintext),
        lastFour: plaintext.slice(-4),
        expiresAt: new Date(now + 30 * DAY_MS),
        lifetimeDays: 30,
        previousValidUntil: new Date(now + 15 * 60_000),
        regeneratedAt: new Date(now),
      };
      expect(replaceValue).toHaveBeenCalledWith(manager, 1, 7, current.hash, next);
      expect(view).toMatchObject({
        expiresAt: next.expiresAt,
        regeneratedAt: next.regeneratedAt,
        version: now,
        status: 'active',
      });
      expect(recordIn).toHaveBeenCalledWith(manager, person, {
        event: 'token.regenerated',
        userId: 1,
        tokenId: 7,
        target: { type: 'token', id: 7 },
        detail: { name: 'laptop', grace_minutes: 15 },
      });
    });

    it('should refuse the replaced value from the next request when no grace period is asked for', async () => {
      await service.regenerate(person, 7);
      expect(replaceValue).toHaveBeenCalledWith(
        manager,
        1,
        7,
        current.hash,
        expect.objectContaining({ previousValidUntil: new Date(now) }),
      );
    });

    it('should give no grace period to the value of a token that has expired', async () => {
      findForOwner.mockResolvedValue(stored({ expiresAt: new Date(now) }));
      await service.regenerate(person, 7, 60);
      expect(replaceValue).toHaveBeenCalledWith(
        manager,
        1,
        7,
        current.hash,
        expect.objectContaining({ previousValidUntil: new Date(now) }),
      );
      expect(recordIn).toHaveBeenCalledWith(
        manager,
        person,
        expect.objectContaining({ detail: { name: 'laptop', grace_minutes: 0 } }),
      );
    });

    it('should refuse with TokenChangedError, replacing nothing, when the version asked for is not the current value', async () => {
      const token = stored({ regeneratedAt: new Date(now - DAY_MS) });
      findForOwner.mockResolvedValue(token);
      await expect(
        service.regenerate(person, 7, 0, token.createdAt.getTime()),
      ).rejects.toBeInstanceOf(TokenChangedError);
      expect(replaceValue).not.toHaveBeenCalled();
      expect(recordIn).not.toHaveBeenCalled();
    });

    it('should refuse with TokenChangedError when another regeneration replaced the value first', async () => {
      replaceValue.mockResolvedValue(false);
      await expect(service.regenerate(person, 7, 5)).rejects.toBeInstanceOf(TokenChangedError);
      expect(recordIn).not.toHaveBeenCalled();
    });

    it('should refuse to give a revoked token a new value', async () => {
      findForOwner.mockResolvedValue(stored({ revokedAt: new Date(now - DAY_MS) }));
      await expect(service.regenerate(person, 7, 5)).rejects.toBeInstanceOf(TokenRevokedError);
      expect(replaceValue).not.toHaveBeenCalled();
    });
  });
});
