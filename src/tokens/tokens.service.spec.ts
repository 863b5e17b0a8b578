import { beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { Clock, ManualClock } from '../clock/clock.js';
import { Transactions } from '../database/transactions.js';
import { AuditLog } from '../audit/audit-log.js';
import { SecurityNotices } from '../security-notices/security-notices.js';
import { EmailVerificationService } from '../email-verification/email-verification.service.js';
import { CONFIG } from '../config/config.module.js';
import { LastUsedRecorder } from './last-used-recorder.js';
import { TokenUsageRecorder } from './token-usage-recorder.js';
import { generateToken, hashToken } from './token-format.js';
import { TokensRepository, type TokenWithOwner } from './tokens.repository.js';
import { TokensService } from './tokens.service.js';

function principal(overrides: Partial<TokenWithOwner> = {}): TokenWithOwner {
  return {
    tokenId: 7,
    tokenName: 'laptop',
    createdAt: new Date('2026-11-01T09:00:00Z'),
    abilities: ['user:read', 'team:read'],
    expiresAt: null,
    revokedAt: null,
    lastUsedAt: null,
    previousValue: false,
    previousValidUntil: null,
    user: { id: 1, name: 'Ada', email: 'ada@example.com' },
    team: { id: 2, name: "Ada's Team", slug: 'adas-team' },
    ...overrides,
  };
}

describe('TokensService.authenticate', () => {
  let service: TokensService;
  const findWithOwnerByHash = jest.fn<TokensRepository['findWithOwnerByHash']>();
  const record = jest.fn<LastUsedRecorder['record']>();
  const clock = new ManualClock(Date.parse('2026-11-24T12:00:00Z'));

  beforeEach(async () => {
    findWithOwnerByHash.mockReset();
    record.mockReset();
    const moduleRef = await Test.createTestingModule({
      providers: [
        TokensService,
        { provide: TokensRepository, useValue: { findWithOwnerByHash } },
        { provide: LastUsedRecorder, useValue: { record } },
        { provide: TokenUsageRecorder, useValue: { record: jest.fn() } },
        { provide: Transactions, useValue: {} },
        { provide: EmailVerificationService, useValue: {} },
        { provide: CONFIG, useValue: { tokens: { maxLifetimeDays: null } } },
        { provide: SecurityNotices, useValue: {} },
        { provide: AuditLog, useValue: {} },
        { provide: Clock, useValue: clock },
      ],
    }).compile();
    service = moduleRef.get(TokensService);
  });

  it('should refuse a malformed token without asking the repository', async () => {
    await expect(service.authenticate('tsr_short')).rejects.toMatchObject({
      code: 'invalid_token',
    });
    const bad = generateToken().plaintext.slice(0, -1) + '!';
    await expect(service.authenticate(bad)).rejects.toMatchObject({ code: 'invalid_token' });
    expect(findWithOwnerByHash).not.toHaveBeenCalled();
  });

  it('should look the token up by its SHA-256 when it is well formed', async () => {
    const { plaintext } = generateToken();
    findWithOwnerByHash.mockResolvedValue(principal());
    await expect(service.authenticate(plaintext)).resolves.toMatchObject({ tokenId: 7 });
    expect(findWithOwnerByHash).toHaveBeenCalledWith(hashToken(plaintext));
    expect(record).toHaveBeenCalledWith(7, null, expect.any(Number));
  });

  it('should refuse unknown, revoked and expired tokens with their own codes', async () => {
    const { plaintext } = generateToken();
    findWithOwnerByHash.mockResolvedValueOnce(null);
    await expect(service.authenticate(plaintext)).rejects.toMatchObject({ code: 'invalid_token' });
    findWithOwnerByHash.mockResolvedValueOnce(principal({ revokedAt: new Date() }));
    await expect(service.authenticate(plaintext)).rejects.toMatchObject({ code: 'token_revoked' });
    findWithOwnerByHash.mockResolvedValueOnce(
      principal({ expiresAt: new Date(clock.nowMs() - 1) }),
    );
    await expect(service.authenticate(plaintext)).rejects.toMatchObject({ code: 'token_expired' });
    expect(record).not.toHaveBeenCalled();
  });

  it('should accept the value a regeneration replaced until its grace period ends', async () => {
    const { plaintext } = generateToken();
    const inGrace = principal({
      previousValue: true,
      previousValidUntil: new Date(clock.nowMs() + 60_000),
    });
    findWithOwnerByHash.mockResolvedValueOnce(inGrace);
    await expect(service.authenticate(plaintext)).resolves.toBe(inGrace);
    findWithOwnerByHash.mockResolvedValueOnce(
      principal({ previousValue: true, previousValidUntil: new Date(clock.nowMs() - 1) }),
    );
    await expect(service.authenticate(plaintext)).rejects.toMatchObject({ code: 'token_revoked' });
  });

  it("should accept the current value whatever the previous one's grace period", async () => {
    findWithOwnerByHash.mockResolvedValue(
      principal({ previousValue: false, previousValidUntil: new Date(clock.nowMs() - 60_000) }),
    );
    await expect(service.authenticate(generateToken().plaintext)).resolves.toMatchObject({
      tokenId: 7,
    });
  });

  it('should report revocation before expiry when a token is both', async () => {
    findWithOwnerByHash.mockResolvedValue(
      principal({ revokedAt: new Date(), expiresAt: new Date(clock.nowMs() - 1) }),
    );
    await expect(service.authenticate(generateToken().plaintext)).rejects.toMatchObject({
      code: 'token_revoked',
    });
  });
});
