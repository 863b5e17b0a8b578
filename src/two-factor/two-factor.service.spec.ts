import { Actors } from '../common/actor.js';
import { beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { Secret, TOTP } from 'otpauth';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { ManualClock, Clock } from '../clock/clock.js';
import { Transactions } from '../database/transactions.js';
import { EmailVerificationService } from '../email-verification/email-verification.service.js';
import { SecurityNotices } from '../security-notices/security-notices.js';
import { hashRecoveryCode } from './recovery-codes.js';
import { SecretCipher } from './secret-cipher.js';
import { TotpCodes } from './totp.js';
import type { ReservedAttempt } from '../rate-limit/reserved-attempt.js';
import { TwoFactorLimiter } from './two-factor-limiter.js';
import { TooManyTwoFactorAttemptsError } from './two-factor.errors.js';
import type { TwoFactorCredential } from './two-factor-credential.entity.js';
import { TwoFactorRepository } from './two-factor.repository.js';
import { TwoFactorService } from './two-factor.service.js';
import { AuditLog } from '../audit/audit-log.js';

const person = Actors.person(7);
const now = Date.UTC(2026, 0, 5, 12, 0, 15);
const step = Math.floor(now / 30_000);
const codeAt = (secret: string, atStep: number) =>
  TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: atStep * 30_000 });

describe('TwoFactorService.verifySignIn', () => {
  let service: TwoFactorService;
  let cipher: SecretCipher;
  const secret = new Secret({ size: 20 }).base32;
  const findCredential = jest.fn<TwoFactorRepository['findCredential']>();
  const advanceStep = jest.fn<TwoFactorRepository['advanceStep']>();
  const consumeRecoveryCode = jest.fn<TwoFactorRepository['consumeRecoveryCode']>();
  const countUnusedRecoveryCodes = jest.fn<TwoFactorRepository['countUnusedRecoveryCodes']>();
  const reserve = jest.fn<TwoFactorLimiter['reserve']>();
  const giveBack = jest.fn<ReservedAttempt['giveBack']>();

  const credential = (sealed: string, lastUsedStep: number | null = null) =>
    ({
      userId: person.userId,
      secret: sealed,
      lastUsedStep,
      enabledAt: new Date(),
    }) as TwoFactorCredential;

  beforeEach(async () => {
    for (const mock of [
      findCredential,
      advanceStep,
      consumeRecoveryCode,
      countUnusedRecoveryCodes,
    ]) {
      mock.mockReset();
    }
    giveBack.mockReset().mockResolvedValue();
    reserve.mockReset().mockResolvedValue({ giveBack } as unknown as ReservedAttempt);
    advanceStep.mockResolvedValue(true);
    const manager = {};
    const moduleRef = await Test.createTestingModule({
      providers: [
        TwoFactorService,
        TotpCodes,
        SecretCipher,
        {
          provide: CONFIG,
          useValue: { web: { sessionSecret: 'x'.repeat(16) + 'y'.repeat(16) } } as Config,
        },
        {
          provide: TwoFactorRepository,
          useValue: { findCredential, advanceStep, consumeRecoveryCode, countUnusedRecoveryCodes },
        },
        { provide: TwoFactorLimiter, useValue: { reserve } },
        {
          provide: AuditLog,
          useValue: { record: () => undefined, recordIn: () => undefined },
        },
        { provide: EmailVerificationService, useValue: {} },
        { provide: Clock, useValue: new ManualClock(now) },
        { provide: SecurityNotices, useValue: {} },
        {
          provide: Transactions,
          useValue: {
            run: (work: (m: object) => unknown) => work(manager),
            runStatement: (work: (m: object) => unknown) => work(manager),
          },
        },
      ],
    }).compile();
    service = moduleRef.get(TwoFactorService);
    cipher = moduleRef.get(SecretCipher);
    findCredential.mockResolvedValue(credential(cipher.encrypt(secret, 'two-factor:7')));
  });

  it('should accept a code from the app and record its step when it is new', async () => {
    await expect(
      service.verifySignIn(person, 'attempt', { code: codeAt(secret, step) }),
    ).resolves.toEqual({ method: 'totp' });
    expect(advanceStep).toHaveBeenCalledWith(expect.anything(), 7, step);
    // Counted before the check, given back once it proved right.
    expect(reserve).toHaveBeenCalledWith(7, 'attempt');
    expect(giveBack).toHaveBeenCalledTimes(1);
  });

  it('should refuse a code as used when another sign-in recorded its step first', async () => {
    advanceStep.mockResolvedValue(false);
    await expect(
      service.verifySignIn(person, 'attempt', { code: codeAt(secret, step) }),
    ).rejects.toMatchObject({ fields: { code: expect.stringContaining('used already') } });
    expect(reserve).toHaveBeenCalledWith(7, 'attempt');
    expect(giveBack).not.toHaveBeenCalled();
  });

  it('should count a wrong code against the sign-in and the account', async () => {
    const wrong = codeAt(secret, step) === '000000' ? '111111' : '000000';
    await expect(service.verifySignIn(person, 'a1', { code: wrong })).rejects.toMatchObject({
      code: 'validation_failed',
      fields: { code: expect.stringContaining('not right') },
    });
    expect(reserve).toHaveBeenCalledWith(7, 'a1');
    expect(giveBack).not.toHaveBeenCalled();
    expect(advanceStep).not.toHaveBeenCalled();
  });

  it('should check nothing when the limit is reached', async () => {
    reserve.mockRejectedValue(new TooManyTwoFactorAttemptsError(900));
    await expect(
      service.verifySignIn(person, 'a1', { code: codeAt(secret, step) }),
    ).rejects.toBeInstanceOf(TooManyTwoFactorAttemptsError);
    expect(findCredential).not.toHaveBeenCalled();
    expect(advanceStep).not.toHaveBeenCalled();
  });

  it('should use up a recovery code by its hash and say how many are left', async () => {
    consumeRecoveryCode.mockResolvedValue(true);
    countUnusedRecoveryCodes.mockResolvedValue(9);
    await expect(
      service.verifySignIn(person, 'a1', { recoveryCode: ' 0A1B-2C3D-4E5F-6G7H ' }),
    ).resolves.toEqual({ method: 'recovery_code', recoveryCodesLeft: 9 });
    expect(consumeRecoveryCode).toHaveBeenCalledWith(
      expect.anything(),
      7,
      hashRecoveryCode('0a1b2c3d4e5f6g7h'),
      new Date(now),
    );
    expect(giveBack).toHaveBeenCalledTimes(1);
  });

  it('should refuse an unknown or used recovery code, and one that cannot be a code unlooked', async () => {
    consumeRecoveryCode.mockResolvedValue(false);
    await expect(
      service.verifySignIn(person, 'a1', { recoveryCode: '0a1b-2c3d-4e5f-6g7h' }),
    ).rejects.toMatchObject({ fields: { recovery_code: expect.stringContaining('not valid') } });
    await expect(
      service.verifySignIn(person, 'a1', { recoveryCode: 'DROP TABLE users' }),
    ).rejects.toMatchObject({ fields: { recovery_code: expect.stringContaining('not valid') } });
    expect(consumeRecoveryCode).toHaveBeenCalledTimes(1);
    expect(reserve).toHaveBeenCalledTimes(2);
    expect(giveBack).not.toHaveBeenCalled();
  });

  it('should tell the person to use a recovery code, without counting it, when the secret cannot be read', async () => {
    findCredential.mockResolvedValue(credential(cipher.encrypt(secret, 'two-factor:8')));
    await expect(
      service.verifySignIn(person, 'a1', { code: codeAt(secret, step) }),
    ).rejects.toMatchObject({ fields: { code: expect.stringContaining('Use a recovery code') } });
    expect(giveBack).toHaveBeenCalledTimes(1);
  });

  it('should ask for a code when given none, before anything is counted', async () => {
    await expect(service.verifySignIn(person, 'a1', { code: '  ' })).rejects.toMatchObject({
      code: 'validation_failed',
    });
    expect(reserve).not.toHaveBeenCalled();
  });
});
