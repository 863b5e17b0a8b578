import { beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Test } from '@nestjs/testing';
import type { EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log.js';
import { Clock, ManualClock } from '../clock/clock.js';
import { Actors } from '../common/actor.js';
import { CONFIG } from '../config/config.module.js';
import { Transactions } from '../database/transactions.js';
import { Events } from '../events/events.js';
import type { Team } from '../teams/team.entity.js';
import { TeamsService } from '../teams/teams.service.js';
import { TokenLifetimes } from '../tokens/token-lifetimes.js';
import { TokensInTeamService } from '../tokens/tokens-in-team.service.js';
import { TokensService } from '../tokens/tokens.service.js';
import type { User } from '../users/user.entity.js';
import { ServiceAccountsRepository } from './service-accounts.repository.js';
import { ServiceAccountsService } from './service-accounts.service.js';

describe('ServiceAccountsService', () => {
  const manager = { name: 'the transaction' } as unknown as EntityManager;
  const acme = { id: 3, name: 'Acme', requireTwoFactor: false } as Team;
  const bot = { id: 40, name: 'deploy-bot', description: null } as User;
  const ada = Actors.person(1);
  const run = jest.fn((work: (m: EntityManager) => Promise<unknown>) => work(manager));
  const teams = {
    getManageableTeam: jest.fn<TeamsService['getManageableTeam']>(),
    certifyManager: jest.fn<TeamsService['certifyManager']>(),
    hasTwoFactor: jest.fn<TeamsService['hasTwoFactor']>(),
  };
  const accounts = {
    reserve: jest.fn<ServiceAccountsRepository['reserve']>(),
    release: jest.fn<ServiceAccountsRepository['release']>(),
    nameTaken: jest.fn<ServiceAccountsRepository['nameTaken']>(),
    insert: jest.fn<ServiceAccountsRepository['insert']>(),
    findInTeam: jest.fn<ServiceAccountsRepository['findInTeam']>(),
    delete: jest.fn<ServiceAccountsRepository['delete']>(),
  };
  const publish = jest.fn<Events['publish']>();
  const recordIn = jest.fn<AuditLog['recordIn']>();
  const createForServiceAccount = jest.fn<TokensService['createForServiceAccount']>();
  let service: ServiceAccountsService;

  beforeEach(async () => {
    for (const mock of [run, publish, recordIn, ...Object.values(accounts)]) {
      mock.mockClear();
    }
    teams.getManageableTeam.mockReset().mockResolvedValue({ ...acme } as Team);
    teams.certifyManager.mockReset().mockResolvedValue();
    teams.hasTwoFactor.mockReset().mockResolvedValue(false);
    accounts.reserve.mockResolvedValue(true);
    accounts.nameTaken.mockResolvedValue(false);
    accounts.insert.mockResolvedValue(bot);
    accounts.findInTeam.mockResolvedValue(bot);
    accounts.delete.mockResolvedValue(true);
    createForServiceAccount.mockReset();
    const moduleRef = await Test.createTestingModule({
      providers: [
        ServiceAccountsService,
        { provide: TeamsService, useValue: teams },
        { provide: TokensService, useValue: { createForServiceAccount } },
        { provide: TokensInTeamService, useValue: {} },
        { provide: TokenLifetimes, useValue: {} },
        { provide: ServiceAccountsRepository, useValue: accounts },
        { provide: Transactions, useValue: { run } },
        { provide: Events, useValue: { publish } },
        { provide: AuditLog, useValue: { recordIn } },
        { provide: Clock, useValue: new ManualClock() },
        { provide: CONFIG, useValue: { teams: { serviceAccountsPerTeam: 2 } } },
      ],
    }).compile();
    service = moduleRef.get(ServiceAccountsService);
  });

  it('should certify the maker, then reserve one of the team’s places, then make, publish and record it, in one transaction', async () => {
    const order: string[] = [];
    teams.certifyManager.mockImplementationOnce(async () => void order.push('certify'));
    accounts.reserve.mockImplementationOnce(async () => (order.push('reserve'), true));
    accounts.insert.mockImplementationOnce(async () => (order.push('insert'), bot));
    const made = await service.create(ada, acme.id, { name: 'deploy-bot', description: '' });
    expect(made).toBe(bot);
    expect(order).toEqual(['certify', 'reserve', 'insert']);
    expect(accounts.reserve).toHaveBeenCalledWith(manager, acme.id, 2);
    expect(accounts.insert).toHaveBeenCalledWith(manager, acme.id, {
      name: 'deploy-bot',
      description: null,
    });
    expect(publish).toHaveBeenCalledWith(manager, 'service_account.created', {
      actor: ada,
      account: { id: 40, name: 'deploy-bot', description: null },
      team: { id: acme.id, name: 'Acme' },
    });
    expect(recordIn).toHaveBeenCalledWith(
      manager,
      ada,
      expect.objectContaining({ event: 'service_account.created', teamId: acme.id }),
    );
  });

  it('should refuse a service account past the limit, or of a name the team has, making nothing', async () => {
    accounts.reserve.mockResolvedValueOnce(false);
    await expect(service.create(ada, acme.id, { name: 'one too many' })).rejects.toMatchObject({
      code: 'service_account_limit',
      message: 'A team may have at most 2 service accounts: delete one first.',
    });
    accounts.nameTaken.mockResolvedValueOnce(true);
    await expect(service.create(ada, acme.id, { name: 'deploy-bot' })).rejects.toMatchObject({
      code: 'service_account_name_taken',
    });
    expect(accounts.insert).not.toHaveBeenCalled();
    expect(publish).not.toHaveBeenCalled();
  });

  it('should let only people with two-factor sign-in make service accounts or their tokens in a team that requires it; the operator may', async () => {
    teams.getManageableTeam.mockResolvedValue({ ...acme, requireTwoFactor: true } as Team);
    await expect(service.create(ada, acme.id, { name: 'deploy-bot' })).rejects.toMatchObject({
      fields: { name: expect.stringContaining('Acme requires two-factor sign-in') },
    });
    await expect(service.createToken(ada, acme.id, bot.id, { name: 'ci' })).rejects.toMatchObject({
      code: 'validation_failed',
    });
    expect(run).not.toHaveBeenCalled();
    expect(createForServiceAccount).not.toHaveBeenCalled();
    await service.create(Actors.operator(), acme.id, { name: 'deploy-bot' });
    expect(accounts.insert).toHaveBeenCalled();
  });

  it('should delete once: what another deletion got first is not found, and neither counted down nor recorded', async () => {
    await service.delete(ada, acme.id, bot.id);
    expect(accounts.release).toHaveBeenCalledWith(manager, acme.id);
    expect(publish).toHaveBeenCalledWith(manager, 'service_account.deleted', expect.anything());
    accounts.release.mockClear();
    publish.mockClear();
    accounts.delete.mockResolvedValueOnce(false);
    await expect(service.delete(ada, acme.id, bot.id)).rejects.toMatchObject({
      code: 'not_found',
    });
    expect(accounts.release).not.toHaveBeenCalled();
    expect(publish).not.toHaveBeenCalled();
  });

  it("should make its tokens with the token service, the maker's role certified in that transaction", async () => {
    createForServiceAccount.mockResolvedValue({ plaintext: 'tsr_…' } as never);
    await service.createToken(ada, acme.id, bot.id, { name: 'ci', expiresInDays: 7 });
    const [actor, account, team, input, decide] = createForServiceAccount.mock.calls[0];
    expect([actor, account, team.id, input]).toEqual([
      ada,
      bot,
      acme.id,
      { name: 'ci', expiresInDays: 7 },
    ]);
    await decide(manager);
    expect(teams.certifyManager).toHaveBeenCalledWith(manager, ada, acme.id);
    accounts.findInTeam.mockResolvedValueOnce(null);
    await expect(service.createToken(ada, acme.id, 99, { name: 'ci' })).rejects.toMatchObject({
      code: 'not_found',
    });
  });
});
