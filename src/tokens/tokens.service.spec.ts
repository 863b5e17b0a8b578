import { beforeEach, describe, expect, it, jest } from '@jest/globals';
import { AbilityCatalog, BUILT_IN_ABILITIES } from '../config/abilities.config.js';
import { Test } from '@nestjs/testing';
import { Clock, ManualClock } from '../clock/clock.js';
import { Transactions } from '../database/transactions.js';
import { AuditLog } from '../audit/audit-log.js';
import { TokenNotices } from './token-notices.js';
import { EmailVerificationService } from '../email-verification/email-verification.service.js';
import { CONFIG } from '../config/config.module.js';
import { TokensRepository } from './tokens.repository.js';
import { generateToken, hashToken } from './token-format.js';
import { TokenLifetimes } from './token-lifetimes.js';
import { TokensService } from './tokens.service.js';
import type { EntityManager } from 'typeorm';
import { Actors } from '../common/actor.js';
import { ValidationError } from '../common/errors/domain.error.js';
import { EmailNotVerifiedError } from '../email-verification/email-verification.errors.js';
import type { Ability } from './abilities.js';
import type { PersonalAccessToken } from './personal-access-token.entity.js';
import { valueVersionOf } from './token.view.js';
import {
  AmbiguousTokenNameError,
  TokenChangedError,
  TokenNotFoundError,
  TokenRevokedError,
} from './tokens.errors.js';

describe('TokensService token lifecycle', () => {
  const DAY_MS = 86_400_000;
  const now = Date.parse('2026-11-24T12:00:00Z');
  const person = Actors.person(1);
  const manager = { name: 'the transaction' } as unknown as EntityManager;
  const clock = new ManualClock(now);
  let service: TokensService;
  const run = jest.fn((work: (m: EntityManager) => Promise<unknown>) => work(manager));
  const insert = jest.fn<TokensRepository['insert']>();
  const findForOwner = jest.fn<TokensRepository['findForOwner']>();
  const findUnrevokedForOwnerByName = jest.fn<TokensRepository['findUnrevokedForOwnerByName']>();
  const updateDetails = jest.fn<TokensRepository['updateDetails']>();
  const replaceValue = jest.fn<TokensRepository['replaceValue']>();
  const revokeForOwner = jest.fn<TokensRepository['revokeForOwner']>();
  const findPin = jest.fn<TokensRepository['findPin']>();
  const findCurrentTeamOf = jest.fn<TokensRepository['findCurrentTeamOf']>();
  const findTeamOfMember = jest.fn<TokensRepository['findTeamOfMember']>();
  const insertPin = jest.fn<TokensRepository['insertPin']>();
  const assertConfirmed = jest.fn<EmailVerificationService['assertConfirmed']>();
  const notify = jest.fn<TokenNotices['send']>();
  const recordAfterCommit = jest.fn<AuditLog['recordAfterCommit']>();
  const current = generateToken();

  /** Token 7 of user 1, made ten days ago to live thirty. */
  const stored = (overrides: Partial<PersonalAccessToken> = {}): PersonalAccessToken =>
    ({
      id: 7,
      userId: 1,
      name: 'laptop',
      tokenHash: current.hash,
      lastFour: current.lastFour,
      previousTokenHash: null,
      previousValidUntil: null,
      previousRequests: 0,
      previousLastUsedAt: null,
      abilities: ['user:read', 'team:read'],
      expiresAt: new Date(now + 20 * DAY_MS),
      lifetimeDays: 30,
      expiryNotices: 0,
      lastUsedAt: null,
      revokedAt: null,
      createdAt: new Date(now - 10 * DAY_MS),
      regeneratedAt: null,
      ...overrides,
    }) as PersonalAccessToken;

  beforeEach(async () => {
    clock.set(now);
    for (const mock of [run, notify, recordAfterCommit]) mock.mockClear();
    updateDetails.mockReset().mockResolvedValue(true);
    revokeForOwner.mockReset().mockResolvedValue(true);
    insert.mockReset().mockImplementation(async (_m, row) => stored({ ...row, id: 12 }));
    findForOwner.mockReset().mockResolvedValue(stored());
    findUnrevokedForOwnerByName.mockReset().mockResolvedValue([]);
    replaceValue.mockReset().mockResolvedValue(true);
    findPin.mockReset().mockResolvedValue(null);
    findCurrentTeamOf.mockReset().mockResolvedValue(null);
    findTeamOfMember.mockReset().mockResolvedValue(null);
    assertConfirmed.mockReset().mockResolvedValue();
    const moduleRef = await Test.createTestingModule({
      providers: [
        TokensService,
        {
          provide: TokensRepository,
          useValue: {
            insert,
            findForOwner,
            findUnrevokedForOwnerByName,
            updateDetails,
            replaceValue,
            revokeForOwner,
            findPin,
            findCurrentTeamOf,
            findTeamOfMember,
            insertPin,
          },
        },
        TokenLifetimes,
        { provide: Transactions, useValue: { run } },
        { provide: EmailVerificationService, useValue: { assertConfirmed } },
        { provide: CONFIG, useValue: { tokens: { maxLifetimeDays: 90 } } },
        { provide: TokenNotices, useValue: { send: notify } },
        { provide: AuditLog, useValue: { recordAfterCommit, record: jest.fn() } },
        { provide: Clock, useValue: clock },
        { provide: AbilityCatalog, useValue: new AbilityCatalog(BUILT_IN_ABILITIES) },
      ],
    }).compile();
    service = moduleRef.get(TokensService);
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
      expect(recordAfterCommit).not.toHaveBeenCalled();
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
      expect(recordAfterCommit).toHaveBeenCalledWith(manager, person, {
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
      expect(recordAfterCommit).toHaveBeenCalledWith(
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
      expect(recordAfterCommit).toHaveBeenCalledWith(manager, person, {
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
      expect(recordAfterCommit).toHaveBeenCalledWith(
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
      expect(recordAfterCommit).not.toHaveBeenCalled();
    });

    it('should refuse, and record nothing, when the token was revoked after it was read', async () => {
      updateDetails.mockResolvedValue(false);
      await expect(
        service.update(person, 7, { name: 'desktop', abilities: ['user:read'] }),
      ).rejects.toBeInstanceOf(TokenRevokedError);
      expect(recordAfterCommit).not.toHaveBeenCalled();
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
      expect(recordAfterCommit).toHaveBeenCalledWith(manager, person, {
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
      expect(recordAfterCommit).toHaveBeenCalledWith(
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
      expect(recordAfterCommit).not.toHaveBeenCalled();
    });

    it('should refuse with TokenChangedError when another regeneration replaced the value first', async () => {
      replaceValue.mockResolvedValue(false);
      await expect(service.regenerate(person, 7, 5)).rejects.toBeInstanceOf(TokenChangedError);
      expect(recordAfterCommit).not.toHaveBeenCalled();
    });

    it('should refuse to give a revoked token a new value', async () => {
      findForOwner.mockResolvedValue(stored({ revokedAt: new Date(now - DAY_MS) }));
      await expect(service.regenerate(person, 7, 5)).rejects.toBeInstanceOf(TokenRevokedError);
      expect(replaceValue).not.toHaveBeenCalled();
    });
  });

  describe('revoke', () => {
    it("should revoke the token at the clock's time and record it", async () => {
      await expect(service.revoke(person, 7)).resolves.toMatchObject({
        alreadyRevoked: false,
        token: { id: 7, status: 'revoked', revokedAt: new Date(now) },
      });
      expect(revokeForOwner).toHaveBeenCalledWith(manager, 1, 7, new Date(now));
      expect(recordAfterCommit).toHaveBeenCalledWith(manager, person, {
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
      expect(recordAfterCommit).not.toHaveBeenCalled();
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
      expect(recordAfterCommit).not.toHaveBeenCalled();
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
