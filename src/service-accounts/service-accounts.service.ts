import { Inject, Injectable } from '@nestjs/common';
import { AuditLog } from '../audit/audit-log.js';
import { Clock } from '../clock/clock.js';
import type { Actor } from '../common/actor.js';
import { ValidationError } from '../common/errors/domain.error.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { Transactions } from '../database/transactions.js';
import { Events } from '../events/events.js';
import type { Team } from '../teams/team.entity.js';
import type { TeamRole } from '../teams/team-member.entity.js';
import { TeamsService } from '../teams/teams.service.js';
import type { CreateTokenDto } from '../tokens/dto/create-token.dto.js';
import type { AbilityDefinition } from '../config/abilities.config.js';
import type { ExpiryOptions } from '../tokens/token-lifetimes.js';
import { TokenLifetimes } from '../tokens/token-lifetimes.js';
import { governing } from '../tokens/tokens.repository.js';
import { TokensInTeamService, type TeamTokenView } from '../tokens/tokens-in-team.service.js';
import { TokensService, type CreatedToken } from '../tokens/tokens.service.js';
import type { User } from '../users/user.entity.js';
import type { CreateServiceAccountForm } from './dto/service-accounts.forms.js';
import type { ServiceAccountEvent } from './service-account.events.js';
import {
  ServiceAccountLimitError,
  ServiceAccountNameTakenError,
  ServiceAccountNotFoundError,
} from './service-accounts.errors.js';
import {
  ServiceAccountsRepository,
  type ServiceAccountRow,
} from './service-accounts.repository.js';

/** A team's service accounts, for one of its owners and admins. */
export interface ServiceAccountList {
  team: Team;
  role: TeamRole | null;
  accounts: ServiceAccountRow[];
  /** How many the team may have. */
  limit: number;
}

/** One service account, with its active tokens and what a new one of its tokens may be. */
export interface ServiceAccountDetails {
  team: Team;
  role: TeamRole | null;
  account: User;
  tokens: TeamTokenView[];
  tokenForm: { abilities: AbilityDefinition[]; expiry: ExpiryOptions };
}

/**
 * Service accounts: accounts a team owns (rows of `users` with the team's id), made and deleted
 * by the team's owners and admins, whose tokens those same people make and revoke. Nobody signs
 * in to one; its tokens act in its team only, under the team's policy and the deployment's,
 * and outlive whoever made them. Deleting one (or its team) deletes its tokens.
 */
@Injectable()
export class ServiceAccountsService {
  constructor(
    private readonly teams: TeamsService,
    private readonly tokens: TokensService,
    private readonly inTeam: TokensInTeamService,
    private readonly lifetimes: TokenLifetimes,
    private readonly accounts: ServiceAccountsRepository,
    private readonly transactions: Transactions,
    private readonly events: Events,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  private get limit(): number {
    return this.config.teams.serviceAccountsPerTeam;
  }

  /** The team's service accounts; a member is refused (403), anyone else finds no team (404). */
  async list(actor: Actor, teamId: number): Promise<ServiceAccountList> {
    const { team, role } = await this.manageable(actor, teamId);
    const accounts = await this.accounts.findForTeam(team.id, this.clock.now());
    return { team, role, accounts, limit: this.limit };
  }

  /**
   * The team's service accounts as its members list shows them (the caller has read the team
   * as one of its members).
   */
  async shownToMembers(team: Pick<Team, 'id'>): Promise<ServiceAccountRow[]> {
    return this.accounts.findForTeam(team.id, this.clock.now());
  }

  /** One of the team's service accounts with its active tokens; any other id is a 404. */
  async get(actor: Actor, teamId: number, accountId: number): Promise<ServiceAccountDetails> {
    const { team, role } = await this.manageable(actor, teamId);
    const account = await this.accounts.findInTeam(team.id, accountId);
    if (!account) throw new ServiceAccountNotFoundError();
    const governed = governing(team);
    const tokens = await this.inTeam.listOfAccountIn(governed, account.id);
    const tokenForm = {
      abilities: this.inTeam.abilitiesForServiceAccountsIn(governed),
      expiry: this.lifetimes.optionsIn(governed),
    };
    return { team, role, account, tokens, tokenForm };
  }

  /**
   * Makes a service account of the team, within the deployment's limit per team: the count is
   * reserved by one conditional UPDATE in the creating transaction, after the maker's role is
   * certified, so creations sent at once never pass the limit. Names are unique in a team.
   */
  async create(actor: Actor, teamId: number, input: CreateServiceAccountForm): Promise<User> {
    const team = await this.teams.getManageableTeam(actor, teamId);
    await this.assertTwoFactorIfRequired(actor, team);
    const description = input.description ? input.description : null;
    return this.transactions.run(async (m) => {
      await this.teams.certifyManager(m, actor, team.id);
      if (!(await this.accounts.reserve(m, team.id, this.limit))) {
        throw new ServiceAccountLimitError(this.limit);
      }
      // After the reservation, which holds the team's row: two creations of one name queue.
      if (await this.accounts.nameTaken(m, team.id, input.name)) {
        throw new ServiceAccountNameTakenError();
      }
      const account = await this.accounts.insert(m, team.id, { name: input.name, description });
      await this.events.publish(m, 'service_account.created', eventOf(actor, account, team));
      this.audit.recordIn(m, actor, {
        event: 'service_account.created',
        teamId: team.id,
        target: { type: 'service_account', id: account.id },
        detail: { service_account: account.name, description, team: team.name },
      });
      return account;
    });
  }

  /**
   * Deletes the service account, and its tokens with it: refused from their next request on
   * every instance. Of two deletions at once, one deletes, records and publishes; the other
   * finds nothing (404).
   */
  async delete(actor: Actor, teamId: number, accountId: number): Promise<User> {
    const team = await this.teams.getManageableTeam(actor, teamId);
    const account = await this.accounts.findInTeam(team.id, accountId);
    if (!account) throw new ServiceAccountNotFoundError();
    await this.transactions.run(async (m) => {
      await this.teams.certifyManager(m, actor, team.id);
      if (!(await this.accounts.delete(m, team.id, account.id))) {
        throw new ServiceAccountNotFoundError();
      }
      await this.accounts.release(m, team.id);
      await this.events.publish(m, 'service_account.deleted', eventOf(actor, account, team));
      this.audit.recordIn(m, actor, {
        event: 'service_account.deleted',
        teamId: team.id,
        target: { type: 'service_account', id: account.id },
        detail: { service_account: account.name, team: team.name },
      });
    });
    return account;
  }

  /**
   * A token for the service account, made by one of the team's owners and admins (or the
   * operator) with the token service every token is made with: pinned to the team, held to its
   * policy and the deployment's, shown once.
   */
  async createToken(
    actor: Actor,
    teamId: number,
    accountId: number,
    input: Omit<CreateTokenDto, 'teamId'>,
  ): Promise<CreatedToken> {
    const team = await this.teams.getManageableTeam(actor, teamId);
    await this.assertTwoFactorIfRequired(actor, team);
    const account = await this.accounts.findInTeam(team.id, accountId);
    if (!account) throw new ServiceAccountNotFoundError();
    return this.tokens.createForServiceAccount(actor, account, governing(team), input, (m) =>
      this.teams.certifyManager(m, actor, team.id),
    );
  }

  /** The team of a service account, for the operator, who names it by id alone; else a 404. */
  async teamOf(actor: Actor, accountId: number): Promise<number> {
    const teamId = actor.kind === 'operator' ? await this.accounts.teamOf(accountId) : null;
    if (teamId === null) throw new ServiceAccountNotFoundError();
    return teamId;
  }

  private async manageable(
    actor: Actor,
    teamId: number,
  ): Promise<{ team: Team; role: TeamRole | null }> {
    if (actor.kind === 'operator') {
      return { team: await this.teams.getManageableTeam(actor, teamId), role: null };
    }
    return this.teams.getForManager(actor, teamId);
  }

  /**
   * A team that requires two-factor sign-in lets only people who have it on make service
   * accounts and their tokens, which outlive them: a password alone must not mint one.
   */
  private async assertTwoFactorIfRequired(actor: Actor, team: Team): Promise<void> {
    if (actor.kind === 'operator' || !team.requireTwoFactor) return;
    if (await this.teams.hasTwoFactor(actor)) return;
    throw new ValidationError({
      name: `${team.name} requires two-factor sign-in: turn it on for yourself first (Account Settings, Security).`,
    });
  }
}

function eventOf(actor: Actor, account: User, team: Team): ServiceAccountEvent {
  return {
    actor,
    account: { id: account.id, name: account.name, description: account.description },
    team: { id: team.id, name: team.name },
  };
}
