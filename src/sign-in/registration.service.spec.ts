import { beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Test } from '@nestjs/testing';
import type { EntityManager } from 'typeorm';
import { PasswordHasher } from '../auth/password-hasher.js';
import { Clock, ManualClock } from '../clock/clock.js';
import { Actors } from '../common/actor.js';
import { CONFIG } from '../config/config.module.js';
import { Transactions } from '../database/transactions.js';
import { EmailVerificationService } from '../email-verification/email-verification.service.js';
import { Events } from '../events/events.js';
import { AuditLog } from '../audit/audit-log.js';
import { Mailer } from '../mail/mailer.js';
import { AddressLimiter } from '../rate-limit/address-limiter.js';
import type { Team } from '../teams/team.entity.js';
import { TeamsService } from '../teams/teams.service.js';
import type { User } from '../users/user.entity.js';
import { EmailTakenError } from '../users/users.errors.js';
import { UsersRepository } from '../users/users.repository.js';
import { REGISTRATION_ATTEMPT_MAIL, RegistrationService } from './registration.service.js';

const now = Date.parse('2026-11-24T12:00:00Z');
const client = { ip: '203.0.113.9', userAgent: 'Firefox' };
const visitor = Actors.visitor(client);
const registration = { name: 'Ada Lovelace', email: 'ada@example.com', password: 'correct horse' };

/** What the database says when the unique index on users.email refuses a row. */
const emailTaken = () =>
  Object.assign(new Error("Duplicate entry 'ada@example.com' for key 'UQ_users_email'"), {
    code: 'ER_DUP_ENTRY',
  });

const owner = {
  id: 3,
  name: 'Ada',
  email: 'ada@example.com',
  passwordHash: 'x',
  emailVerifiedAt: new Date(now - 86_400_000),
  currentTeamId: 4,
} as User;

describe('RegistrationService', () => {
  let service: RegistrationService;
  const manager = { name: 'the transaction' } as unknown as EntityManager;
  const clock = new ManualClock(now);
  const run = jest.fn((work: (m: EntityManager) => Promise<unknown>) => work(manager));
  const findByEmail = jest.fn<UsersRepository['findByEmail']>();
  const insert = jest.fn<UsersRepository['insert']>();
  const createPersonalTeam = jest.fn<TeamsService['createPersonalTeam']>();
  const hash = jest.fn<PasswordHasher['hash']>();
  const requestFor = jest.fn<EmailVerificationService['requestFor']>();
  const send = jest.fn<Mailer['send']>();
  const allow = jest.fn<AddressLimiter['allow']>();
  const publish = jest.fn<(...args: unknown[]) => Promise<void>>();

  beforeEach(async () => {
    for (const mock of [run, requestFor, send, publish]) {
      mock.mockClear();
    }
    findByEmail.mockReset().mockResolvedValue(null);
    insert
      .mockReset()
      .mockImplementation(
        async (_m, fields) => ({ id: 42, currentTeamId: null, ...fields }) as User,
      );
    createPersonalTeam.mockReset().mockResolvedValue({ id: 43, name: "Ada's Team" } as Team);
    hash.mockReset().mockResolvedValue('argon2-hash');
    allow.mockReset().mockResolvedValue(true);
    const moduleRef = await Test.createTestingModule({
      providers: [
        RegistrationService,
        { provide: UsersRepository, useValue: { findByEmail, insert, findById: jest.fn() } },
        { provide: TeamsService, useValue: { createPersonalTeam } },
        { provide: PasswordHasher, useValue: { hash } },
        { provide: Transactions, useValue: { run } },
        { provide: EmailVerificationService, useValue: { requestFor } },
        { provide: Mailer, useValue: { send } },
        { provide: AddressLimiter, useValue: { allow } },
        { provide: Events, useValue: { publish } },
        { provide: AuditLog, useValue: { recordIn: jest.fn() } },
        { provide: Clock, useValue: clock },
        { provide: CONFIG, useValue: { app: { publicUrl: 'https://tessera.test' } } },
      ],
    }).compile();
    service = moduleRef.get(RegistrationService);
  });

  describe('register', () => {
    it('should create an unconfirmed account with the hashed password when the address is new', async () => {
      await expect(service.register(visitor, registration)).resolves.toBeUndefined();
      expect(hash).toHaveBeenCalledWith('correct horse');
      expect(insert).toHaveBeenCalledTimes(1);
      // Exactly the columns: the plaintext password never reaches the repository.
      expect(insert).toHaveBeenCalledWith(manager, {
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        passwordHash: 'argon2-hash',
        emailVerifiedAt: null,
      });
    });

    it("should make a personal team the new account's current team when the address is new", async () => {
      await service.register(visitor, registration);
      expect(createPersonalTeam).toHaveBeenCalledWith(
        manager,
        expect.objectContaining({ id: 42, email: 'ada@example.com' }),
      );
      const [, , payload] = publish.mock.calls[0] as [unknown, unknown, { user: User }];
      expect(payload.user.currentTeamId).toBe(43);
    });

    it('should ask for the confirmation mail of the new account in the same transaction when the address is new', async () => {
      await service.register(visitor, registration);
      expect(requestFor).toHaveBeenCalledWith(manager, expect.objectContaining({ id: 42 }));
      expect(send).not.toHaveBeenCalled();
    });

    it('should publish account.registered with the new person as actor when the address is new', async () => {
      await service.register(visitor, { ...registration, invitation: 'invite-token' });
      expect(publish).toHaveBeenCalledTimes(1);
      expect(publish).toHaveBeenCalledWith(manager, 'account.registered', {
        actor: { kind: 'person', userId: 42, session: null, client },
        user: expect.objectContaining({ id: 42 }),
        invitation: 'invite-token',
      });
    });

    it('should mail the owner instead of creating an account when the address is taken', async () => {
      findByEmail.mockResolvedValue(owner);
      await expect(service.register(visitor, registration)).resolves.toBeUndefined();
      expect(send).toHaveBeenCalledWith(manager, REGISTRATION_ATTEMPT_MAIL, 'ada@example.com', {
        userId: 3,
      });
      expect(insert).not.toHaveBeenCalled();
      expect(createPersonalTeam).not.toHaveBeenCalled();
      expect(requestFor).not.toHaveBeenCalled();
      expect(publish).not.toHaveBeenCalled();
    });

    it('should send the owner nothing, and answer the same, when the address is past its mail limit', async () => {
      findByEmail.mockResolvedValue(owner);
      allow.mockResolvedValue(false);
      await expect(service.register(visitor, registration)).resolves.toBeUndefined();
      expect(allow).toHaveBeenCalledWith(REGISTRATION_ATTEMPT_MAIL, 'ada@example.com');
      expect(send).not.toHaveBeenCalled();
      expect(insert).not.toHaveBeenCalled();
    });

    it('should hash the password and count the address before looking it up, whether or not it is taken', async () => {
      for (const found of [null, owner]) {
        hash.mockClear();
        allow.mockClear();
        findByEmail.mockClear().mockResolvedValue(found);
        await expect(service.register(visitor, registration)).resolves.toBeUndefined();
        expect(hash).toHaveBeenCalledTimes(1);
        expect(allow).toHaveBeenCalledTimes(1);
        expect(hash.mock.invocationCallOrder[0]).toBeLessThan(
          findByEmail.mock.invocationCallOrder[0],
        );
        expect(allow.mock.invocationCallOrder[0]).toBeLessThan(
          findByEmail.mock.invocationCallOrder[0],
        );
      }
    });

    it('should answer as for a taken address when another registration takes it at the same moment', async () => {
      findByEmail.mockResolvedValueOnce(null).mockResolvedValueOnce(owner);
      insert.mockRejectedValue(emailTaken());
      await expect(service.register(visitor, registration)).resolves.toBeUndefined();
      expect(run).toHaveBeenCalledTimes(2);
      expect(send).toHaveBeenCalledTimes(1);
      expect(send).toHaveBeenCalledWith(manager, REGISTRATION_ATTEMPT_MAIL, 'ada@example.com', {
        userId: 3,
      });
      expect(publish).not.toHaveBeenCalled();
    });

    it('should keep to the per-address limit when another registration takes the address at the same moment', async () => {
      findByEmail.mockResolvedValueOnce(null).mockResolvedValueOnce(owner);
      insert.mockRejectedValue(emailTaken());
      allow.mockResolvedValue(false);
      await expect(service.register(visitor, registration)).resolves.toBeUndefined();
      expect(allow).toHaveBeenCalledTimes(1);
      expect(send).not.toHaveBeenCalled();
    });

    it('should pass on a failure that is not the address being taken', async () => {
      const slugTaken = Object.assign(new Error("Duplicate entry 'ada' for key 'UQ_teams_slug'"), {
        code: 'ER_DUP_ENTRY',
      });
      createPersonalTeam.mockRejectedValue(slugTaken);
      await expect(service.register(visitor, registration)).rejects.toBe(slugTaken);
      expect(run).toHaveBeenCalledTimes(1);
      expect(publish).not.toHaveBeenCalled();
      expect(send).not.toHaveBeenCalled();
    });
  });

  describe('createAccount', () => {
    it('should create an account whose address is confirmed now when the operator vouches for it', async () => {
      const user = await service.createAccount(
        { name: 'Grace', email: 'grace@example.com', password: 'a long password' },
        { verified: true },
      );
      expect(insert).toHaveBeenCalledWith(manager, {
        name: 'Grace',
        email: 'grace@example.com',
        passwordHash: 'argon2-hash',
        emailVerifiedAt: new Date(now),
      });
      expect(user).toMatchObject({ id: 42, emailVerifiedAt: new Date(now), currentTeamId: 43 });
    });

    it('should create an account whose address is unconfirmed when not verified', async () => {
      const user = await service.createAccount(
        { name: 'Grace', email: 'grace@example.com', password: 'a long password' },
        { verified: false },
      );
      expect(user.emailVerifiedAt).toBeNull();
      expect(createPersonalTeam).toHaveBeenCalledWith(manager, user);
    });

    it('should store no password, hashing nothing, when none is given', async () => {
      const user = await service.createAccount(
        { name: 'Grace', email: 'grace@example.com' },
        { verified: true },
      );
      expect(user.passwordHash).toBeNull();
      expect(hash).not.toHaveBeenCalled();
    });

    it('should send no mail and publish no event when an account is created', async () => {
      await service.createAccount(
        { name: 'Grace', email: 'grace@example.com' },
        { verified: false },
      );
      expect(requestFor).not.toHaveBeenCalled();
      expect(send).not.toHaveBeenCalled();
      expect(publish).not.toHaveBeenCalled();
    });

    it('should refuse with EmailTakenError when the address has an account', async () => {
      insert.mockRejectedValue(emailTaken());
      await expect(
        service.createAccount({ name: 'Ada', email: 'ada@example.com' }, { verified: true }),
      ).rejects.toBeInstanceOf(EmailTakenError);
      expect(createPersonalTeam).not.toHaveBeenCalled();
    });

    it('should pass on a failure that is not the address being taken', async () => {
      const down = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      insert.mockRejectedValue(down);
      await expect(
        service.createAccount({ name: 'Ada', email: 'ada@example.com' }, { verified: true }),
      ).rejects.toBe(down);
    });
  });
});
