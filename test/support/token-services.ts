import { jest } from '@jest/globals';
import { Test } from '@nestjs/testing';
import type { EntityManager } from 'typeorm';
import { AuditLog } from '../../src/audit/audit-log.js';
import { Clock, ManualClock } from '../../src/clock/clock.js';
import { Actors } from '../../src/common/actor.js';
import { AbilityCatalog, BUILT_IN_ABILITIES } from '../../src/config/abilities.config.js';
import { CONFIG } from '../../src/config/config.module.js';
import { Transactions } from '../../src/database/transactions.js';
import { EmailVerificationService } from '../../src/email-verification/email-verification.service.js';
import type { PersonalAccessToken } from '../../src/tokens/personal-access-token.entity.js';
import { generateToken } from '../../src/tokens/token-format.js';
import { TokenLifetimes } from '../../src/tokens/token-lifetimes.js';
import { TokenNotices } from '../../src/tokens/token-notices.js';
import { TokenRegenerationService } from '../../src/tokens/token-regeneration.service.js';
import { TokensRepository } from '../../src/tokens/tokens.repository.js';
import { TokensService } from '../../src/tokens/tokens.service.js';

const DAY_MS = 86_400_000;

/**
 * The token services (`TokensService`, `TokenRegenerationService`) over a mocked repository,
 * transaction, notices, audit log and address check, with the real lifetimes (a deployment
 * maximum of 90 days) and catalog: what the tokens feature's unit specs share. `reset()` before
 * each test gives fresh mocks' answers and the clock at `now`.
 */
export class TokenServices {
  readonly DAY_MS = DAY_MS;
  readonly now = Date.parse('2026-11-24T12:00:00Z');
  readonly person = Actors.person(1);
  readonly manager = { name: 'the transaction' } as unknown as EntityManager;
  readonly clock = new ManualClock(this.now);
  tokens!: TokensService;
  regeneration!: TokenRegenerationService;
  readonly run = jest.fn((work: (m: EntityManager) => Promise<unknown>) => work(this.manager));
  readonly insert = jest.fn<TokensRepository['insert']>();
  readonly findForOwner = jest.fn<TokensRepository['findForOwner']>();
  readonly findUnrevokedForOwnerByName = jest.fn<TokensRepository['findUnrevokedForOwnerByName']>();
  readonly updateDetails = jest.fn<TokensRepository['updateDetails']>();
  readonly replaceValue = jest.fn<TokensRepository['replaceValue']>();
  readonly revokeForOwner = jest.fn<TokensRepository['revokeForOwner']>();
  readonly findPin = jest.fn<TokensRepository['findPin']>();
  readonly findCurrentTeamOf = jest.fn<TokensRepository['findCurrentTeamOf']>();
  readonly findTeamOfMember = jest.fn<TokensRepository['findTeamOfMember']>();
  readonly insertPin = jest.fn<TokensRepository['insertPin']>();
  readonly assertConfirmed = jest.fn<EmailVerificationService['assertConfirmed']>();
  readonly notify = jest.fn<TokenNotices['send']>();
  readonly recordIn = jest.fn<AuditLog['recordIn']>();
  readonly current = generateToken();

  /** Token 7 of user 1, made ten days ago to live thirty. */
  readonly stored = (overrides: Partial<PersonalAccessToken> = {}): PersonalAccessToken =>
    ({
      id: 7,
      userId: 1,
      name: 'laptop',
      tokenHash: this.current.hash,
      lastFour: this.current.lastFour,
      previousTokenHash: null,
      previousValidUntil: null,
      previousRequests: 0,
      previousLastUsedAt: null,
      abilities: ['user:read', 'team:read'],
      expiresAt: new Date(this.now + 20 * DAY_MS),
      lifetimeDays: 30,
      expiryNotices: 0,
      lastUsedAt: null,
      revokedAt: null,
      createdAt: new Date(this.now - 10 * DAY_MS),
      regeneratedAt: null,
      ...overrides,
    }) as PersonalAccessToken;

  async reset(): Promise<void> {
    const { now, clock, stored } = this;
    clock.set(now);
    for (const mock of [this.run, this.notify, this.recordIn]) mock.mockClear();
    this.updateDetails.mockReset().mockResolvedValue(true);
    this.revokeForOwner.mockReset().mockResolvedValue(true);
    this.insert.mockReset().mockImplementation(async (_m, row) => stored({ ...row, id: 12 }));
    this.findForOwner.mockReset().mockResolvedValue(stored());
    this.findUnrevokedForOwnerByName.mockReset().mockResolvedValue([]);
    this.replaceValue.mockReset().mockResolvedValue(true);
    this.findPin.mockReset().mockResolvedValue(null);
    this.findCurrentTeamOf.mockReset().mockResolvedValue(null);
    this.findTeamOfMember.mockReset().mockResolvedValue(null);
    this.assertConfirmed.mockReset().mockResolvedValue();
    const moduleRef = await Test.createTestingModule({
      providers: [
        TokensService,
        TokenRegenerationService,
        {
          provide: TokensRepository,
          useValue: {
            insert: this.insert,
            findForOwner: this.findForOwner,
            findUnrevokedForOwnerByName: this.findUnrevokedForOwnerByName,
            updateDetails: this.updateDetails,
            replaceValue: this.replaceValue,
            revokeForOwner: this.revokeForOwner,
            findPin: this.findPin,
            findCurrentTeamOf: this.findCurrentTeamOf,
            findTeamOfMember: this.findTeamOfMember,
            insertPin: this.insertPin,
          },
        },
        TokenLifetimes,
        { provide: Transactions, useValue: { run: this.run } },
        { provide: EmailVerificationService, useValue: { assertConfirmed: this.assertConfirmed } },
        { provide: CONFIG, useValue: { tokens: { maxLifetimeDays: 90 } } },
        { provide: TokenNotices, useValue: { send: this.notify } },
        {
          provide: AuditLog,
          useValue: { recordIn: this.recordIn, record: jest.fn() },
        },
        { provide: Clock, useValue: clock },
        { provide: AbilityCatalog, useValue: new AbilityCatalog(BUILT_IN_ABILITIES) },
      ],
    }).compile();
    this.tokens = moduleRef.get(TokensService);
    this.regeneration = moduleRef.get(TokenRegenerationService);
  }
}
