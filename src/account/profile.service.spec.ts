import { beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Test } from '@nestjs/testing';
import type { EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log.js';
import { Clock, ManualClock } from '../clock/clock.js';
import { Actors } from '../common/actor.js';
import { CONFIG } from '../config/config.module.js';
import { Transactions } from '../database/transactions.js';
import { Mailer } from '../mail/mailer.js';
import type { OneTimeLink } from '../one-time-links/one-time-link.entity.js';
import { OneTimeLinks } from '../one-time-links/one-time-links.service.js';
import { AccountLimiter } from '../rate-limit/account-limiter.js';
import { AddressLimiter } from '../rate-limit/address-limiter.js';
import { RateLimitedError } from '../rate-limit/rate-limit.errors.js';
import { SecurityNotices } from '../security-notices/security-notices.js';
import type { User } from '../users/user.entity.js';
import { EmailTakenError, UserNotFoundError } from '../users/users.errors.js';
import { UsersRepository } from '../users/users.repository.js';
import { CHANGE_EMAIL_MAIL, ProfileService } from './profile.service.js';
import { SignInRequiredError } from '../auth/auth.errors.js';
import { SessionsRepository } from '../auth/sessions.repository.js';

const now = Date.parse('2026-11-24T12:00:00Z');
const person = Actors.person(7, { ip: '198.51.100.4', userAgent: 'Safari' }, 'session-7');
const token = 'a'.repeat(43);

const account = (): User =>
  ({
    id: 7,
    name: 'Ada',
    email: 'ada@example.com',
    passwordHash: 'x',
    emailVerifiedAt: new Date(now - 86_400_000),
    currentTeamId: 8,
  }) as User;

const link = (overrides: Partial<OneTimeLink> = {}): OneTimeLink =>
  ({
    id: 11,
    userId: 7,
    purpose: 'change_email',
    tokenHash: 'h',
    email: 'ada@new.example',
    expiresAt: new Date(now + 3_600_000),
    usedAt: null,
    createdAt: new Date(now - 3_600_000),
    ...overrides,
  }) as OneTimeLink;

describe('ProfileService', () => {
  let service: ProfileService;
  const manager = { name: 'the transaction' } as unknown as EntityManager;
  const clock = new ManualClock(now);
  const run = jest.fn((work: (m: EntityManager) => Promise<unknown>) => work(manager));
  const findById = jest.fn<UsersRepository['findById']>();
  const findByEmail = jest.fn<UsersRepository['findByEmail']>();
  const setName = jest.fn<UsersRepository['setName']>();
  const setConfirmedEmail = jest.fn<UsersRepository['setConfirmedEmail']>();
  const check = jest.fn<OneTimeLinks['check']>();
  const use = jest.fn<OneTimeLinks['use']>();
  const cancel = jest.fn<OneTimeLinks['cancel']>();
  const reserve = jest.fn<OneTimeLinks['reserve']>();
  const pending = jest.fn<OneTimeLinks['pending']>();
  const send = jest.fn<Mailer['send']>();
  const withdraw = jest.fn<Mailer['withdraw']>();
  const notify = jest.fn<SecurityNotices['send']>();
  const allow = jest.fn<AddressLimiter['allow']>();
  const consume = jest.fn<AccountLimiter['consume']>();
  const recordIn = jest.fn<AuditLog['recordIn']>();
  const record = jest.fn<AuditLog['record']>();
  const lockForUpdate = jest.fn<UsersRepository['lockForUpdate']>();
  const hasEnded = jest.fn<SessionsRepository['hasEnded']>();

  beforeEach(async () => {
    for (const mock of [run, setName, cancel, send, withdraw, notify, recordIn, record]) {
      mock.mockClear();
    }
    findById.mockReset().mockResolvedValue(account());
    findByEmail.mockReset().mockResolvedValue(null);
    setConfirmedEmail.mockReset().mockResolvedValue();
    check.mockReset().mockResolvedValue({ ok: true, token: link() });
    use.mockReset().mockResolvedValue({ ok: true, token: link() });
    allow.mockReset().mockResolvedValue(true);
    reserve.mockReset().mockResolvedValue(11);
    consume.mockReset().mockResolvedValue();
    lockForUpdate.mockReset().mockResolvedValue();
    hasEnded.mockReset().mockResolvedValue(false);
    const moduleRef = await Test.createTestingModule({
      providers: [
        ProfileService,
        { provide: AuditLog, useValue: { recordIn, record } },
        {
          provide: UsersRepository,
          useValue: { findById, findByEmail, setName, setConfirmedEmail, lockForUpdate },
        },
        { provide: OneTimeLinks, useValue: { check, use, cancel, reserve, pending } },
        { provide: Mailer, useValue: { send, withdraw } },
        { provide: SecurityNotices, useValue: { send: notify } },
        { provide: AddressLimiter, useValue: { allow } },
        { provide: AccountLimiter, useValue: { consume } },
        { provide: Clock, useValue: clock },
        { provide: Transactions, useValue: { run } },
        { provide: SessionsRepository, useValue: { hasEnded } },
        { provide: CONFIG, useValue: { app: { publicUrl: 'https://tessera.test' } } },
      ],
    }).compile();
    service = moduleRef.get(ProfileService);
  });

  describe('update', () => {
    it('should rename the account without mail, limits or a security-log entry when only the name changes', async () => {
      await expect(
        service.update(person, { name: 'Ada Lovelace', email: 'ada@example.com' }),
      ).resolves.toBe(false);
      expect(setName).toHaveBeenCalledWith(manager, 7, 'Ada Lovelace');
      expect(consume).not.toHaveBeenCalled();
      expect(allow).not.toHaveBeenCalled();
      expect(send).not.toHaveBeenCalled();
      expect(recordIn).not.toHaveBeenCalled();
    });

    it('should write nothing when neither the name nor the address changes', async () => {
      await expect(service.update(person, { name: 'Ada', email: 'ada@example.com' })).resolves.toBe(
        false,
      );
      expect(setName).not.toHaveBeenCalled();
      expect(send).not.toHaveBeenCalled();
    });

    it('should hold the link from now and mail it to the new address, not the old one, when the address changes', async () => {
      await expect(service.update(person, { name: 'Ada', email: 'ada@new.example' })).resolves.toBe(
        true,
      );
      expect(reserve).toHaveBeenCalledWith(
        manager,
        7,
        'change_email',
        24 * 3_600_000,
        'ada@new.example',
      );
      expect(send).toHaveBeenCalledTimes(1);
      expect(send).toHaveBeenCalledWith(manager, CHANGE_EMAIL_MAIL, 'ada@new.example', {
        userId: 7,
        linkId: 11,
      });
      expect(setConfirmedEmail).not.toHaveBeenCalled();
      expect(setName).not.toHaveBeenCalled();
    });

    it('should ask for nothing from a session ended meanwhile (a reset cancels waiting changes)', async () => {
      hasEnded.mockResolvedValue(true);
      await expect(
        service.update(person, { name: 'Ada', email: 'ada@new.example' }),
      ).rejects.toBeInstanceOf(SignInRequiredError);
      expect(lockForUpdate).toHaveBeenCalledWith(manager, 7);
      expect(hasEnded).toHaveBeenCalledWith(manager, person, new Date(now));
      expect(reserve).not.toHaveBeenCalled();
      expect(send).not.toHaveBeenCalled();
    });

    it('should mail no new link for a waiting change from a session ended meanwhile', async () => {
      pending.mockResolvedValue(link());
      hasEnded.mockResolvedValue(true);
      await expect(service.resendChange(person)).rejects.toBeInstanceOf(SignInRequiredError);
      expect(lockForUpdate).toHaveBeenCalledWith(manager, 7);
      expect(reserve).not.toHaveBeenCalled();
      expect(send).not.toHaveBeenCalled();
    });

    it('should record the request for a new address in the security log after commit', async () => {
      await service.update(person, { name: 'Ada', email: 'ada@new.example' });
      expect(recordIn).toHaveBeenCalledWith(manager, person, {
        event: 'account.email_change_requested',
        detail: { to: 'ada@new.example' },
      });
      expect(record).not.toHaveBeenCalled();
    });

    it('should count a new address against the account and against the address', async () => {
      await service.update(person, { name: 'Ada', email: 'ada@new.example' });
      expect(consume).toHaveBeenCalledWith('email-change', 7, expect.any(String));
      expect(allow).toHaveBeenCalledWith(CHANGE_EMAIL_MAIL, 'ada@new.example');
    });

    it('should refuse the whole change, the name included, when the account asked too often', async () => {
      const refusal = new RateLimitedError(600, 'You have asked to change your address too often.');
      consume.mockRejectedValue(refusal);
      await expect(
        service.update(person, { name: 'Ada Lovelace', email: 'ada@new.example' }),
      ).rejects.toBe(refusal);
      expect(run).not.toHaveBeenCalled();
      expect(setName).not.toHaveBeenCalled();
      expect(allow).not.toHaveBeenCalled();
      expect(send).not.toHaveBeenCalled();
      expect(recordIn).not.toHaveBeenCalled();
    });

    it('should answer the same, rename and log the request, but mail nothing when the new address is past its limit', async () => {
      allow.mockResolvedValue(false);
      await expect(
        service.update(person, { name: 'Ada Lovelace', email: 'ada@new.example' }),
      ).resolves.toBe(true);
      expect(send).not.toHaveBeenCalled();
      expect(reserve).not.toHaveBeenCalled();
      expect(setName).toHaveBeenCalledWith(manager, 7, 'Ada Lovelace');
      expect(recordIn).toHaveBeenCalledTimes(1);
    });

    it('should refuse with UserNotFoundError when the account is gone', async () => {
      findById.mockResolvedValue(null);
      await expect(
        service.update(person, { name: 'Ada', email: 'ada@new.example' }),
      ).rejects.toBeInstanceOf(UserNotFoundError);
      expect(consume).not.toHaveBeenCalled();
      expect(run).not.toHaveBeenCalled();
    });
  });

  describe('pendingEmail', () => {
    it('should show the new address to the account that asked for it', async () => {
      await expect(service.pendingEmail(person, token)).resolves.toEqual({
        email: 'ada@new.example',
      });
      expect(check).toHaveBeenCalledWith(token, 'change_email');
    });

    it.each(['used', 'expired'] as const)(
      'should say why a %s link cannot be used when the account that asked opens it',
      async (problem) => {
        check.mockResolvedValue({ ok: false, problem, token: link() });
        await expect(service.pendingEmail(person, token)).rejects.toMatchObject({
          problem,
          code: `link_${problem}`,
        });
      },
    );

    it("should say only that a usable link is another account's when another account opens it", async () => {
      check.mockResolvedValue({ ok: true, token: link({ userId: 9 }) });
      await expect(service.pendingEmail(person, token)).resolves.toEqual({ otherAccount: true });
    });

    it('should say why a used link cannot be used, whoever opens it', async () => {
      check.mockResolvedValue({ ok: false, problem: 'used', token: link({ userId: 9 }) });
      await expect(service.pendingEmail(person, token)).rejects.toMatchObject({
        problem: 'used',
        code: 'link_used',
      });
    });

    it('should say the link does not exist when it sets no address', async () => {
      check.mockResolvedValue({ ok: true, token: link({ email: null }) });
      await expect(service.pendingEmail(person, token)).rejects.toMatchObject({
        problem: 'unknown',
      });
    });
  });

  describe('confirmEmail', () => {
    it('should set the new address, confirmed at that moment, when the account that asked confirms', async () => {
      await expect(service.confirmEmail(person, token)).resolves.toBeUndefined();
      expect(use).toHaveBeenCalledWith(manager, token, 'change_email');
      expect(setConfirmedEmail).toHaveBeenCalledWith(manager, 7, 'ada@new.example', new Date(now));
    });

    it('should tell the old address and cancel the reset links mailed before or waiting to be, in the same transaction', async () => {
      await service.confirmEmail(person, token);
      expect(notify).toHaveBeenCalledWith(manager, 7, 'email-changed', { to: 'ada@example.com' });
      expect(withdraw).toHaveBeenCalledWith(manager, 'password-reset', 'ada@example.com');
      expect(cancel).toHaveBeenCalledWith(manager, 7, 'reset_password');
      // Withdrawn first: a reset mail being made waits, and its new link is then cancelled.
      expect(withdraw.mock.invocationCallOrder[0]).toBeLessThan(cancel.mock.invocationCallOrder[0]);
      expect(send).not.toHaveBeenCalled();
    });

    it('should record the change from the old address to the new one in the security log', async () => {
      await service.confirmEmail(person, token);
      expect(recordIn).toHaveBeenCalledWith(manager, person, {
        event: 'account.email_changed',
        detail: { from: 'ada@example.com', to: 'ada@new.example' },
      });
    });

    it("should refuse another account's link as unknown without using it", async () => {
      check.mockResolvedValue({ ok: true, token: link({ userId: 9 }) });
      await expect(service.confirmEmail(person, token)).rejects.toMatchObject({
        problem: 'unknown',
      });
      expect(use).not.toHaveBeenCalled();
      expect(setConfirmedEmail).not.toHaveBeenCalled();
    });

    it.each(['used', 'expired'] as const)(
      'should refuse the link with its own reason, changing nothing, when it is %s',
      async (problem) => {
        check.mockResolvedValue({ ok: false, problem, token: link() });
        use.mockResolvedValue({ ok: false, problem, token: link() });
        await expect(service.confirmEmail(person, token)).rejects.toMatchObject({
          problem,
          code: `link_${problem}`,
        });
        expect(setConfirmedEmail).not.toHaveBeenCalled();
        expect(notify).not.toHaveBeenCalled();
        expect(cancel).not.toHaveBeenCalled();
        expect(recordIn).not.toHaveBeenCalled();
      },
    );

    it('should refuse with EmailTakenError when another account has the address by now', async () => {
      findByEmail.mockResolvedValue({ ...account(), id: 9, email: 'ada@new.example' });
      await expect(service.confirmEmail(person, token)).rejects.toBeInstanceOf(EmailTakenError);
      expect(findByEmail).toHaveBeenCalledWith('ada@new.example', manager);
      expect(setConfirmedEmail).not.toHaveBeenCalled();
      expect(notify).not.toHaveBeenCalled();
      expect(cancel).not.toHaveBeenCalled();
    });

    it('should refuse with EmailTakenError when another account takes the address at the same moment', async () => {
      setConfirmedEmail.mockRejectedValue(
        Object.assign(new Error('UNIQUE constraint failed: users.email'), {
          code: 'SQLITE_CONSTRAINT_UNIQUE',
        }),
      );
      await expect(service.confirmEmail(person, token)).rejects.toBeInstanceOf(EmailTakenError);
      expect(notify).not.toHaveBeenCalled();
    });

    it('should change and tell nothing when the link sets the address the account has already', async () => {
      const same = link({ email: 'ada@example.com' });
      check.mockResolvedValue({ ok: true, token: same });
      use.mockResolvedValue({ ok: true, token: same });
      await expect(service.confirmEmail(person, token)).resolves.toBeUndefined();
      expect(setConfirmedEmail).not.toHaveBeenCalled();
      expect(notify).not.toHaveBeenCalled();
      expect(recordIn).not.toHaveBeenCalled();
    });
  });
});
