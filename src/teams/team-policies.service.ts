import { Injectable } from '@nestjs/common';
import { AuditLog } from '../audit/audit-log.js';
import { accountOf, type Actor } from '../common/actor.js';
import { ValidationError } from '../common/errors/domain.error.js';
import { AbilityCatalog } from '../config/abilities.config.js';
import { Transactions } from '../database/transactions.js';
import { Events } from '../events/events.js';
import { TeamNotices } from './team-notices.js';
import type { Team } from './team.entity.js';
import { OwnerOnlyError, TeamNotFoundError } from './teams.errors.js';
import { TeamsRepository } from './teams.repository.js';
import { TeamsService } from './teams.service.js';

/** A team's policy, as the owner sets it (see TeamPoliciesService.setPolicy). */
export interface TeamPolicyValues {
  requireTwoFactor: boolean;
  tokenMaxLifetimeDays: number | null;
  allowedAbilities: string[] | null;
}

/** What the owner's form asks for; abilities left out are kept as they are. */
export interface PolicyInput {
  requireTwoFactor: boolean;
  tokenMaxLifetimeDays: number | null;
  allowedAbilities?: string[] | null;
}

const policyValuesOf = (team: Team): TeamPolicyValues => ({
  requireTwoFactor: Boolean(team.requireTwoFactor),
  tokenMaxLifetimeDays: team.tokenMaxLifetimeDays ?? null,
  allowedAbilities: team.allowedAbilities ?? null,
});

declare module '../events/events.js' {
  interface DomainEvents {
    /**
     * The owner changed the team's policy, in the transaction that saves it (the tokens it
     * now refuses are mailed about with it).
     */
    'team.policy_changed': {
      actor: Actor;
      team: { id: number; name: string };
      previous: TeamPolicyValues;
      policy: TeamPolicyValues;
    };
  }
}

/** A team's policy, which its owner alone sets: two-factor sign-in, token lifetimes, abilities. */
@Injectable()
export class TeamPoliciesService {
  constructor(
    private readonly audit: AuditLog,
    private readonly teams: TeamsRepository,
    private readonly access: TeamsService,
    private readonly transactions: Transactions,
    private readonly notices: TeamNotices,
    private readonly catalog: AbilityCatalog,
    private readonly events: Events,
  ) {}

  /**
   * The policy the owner asks for, checked as saving it would check it (the owner alone; two-
   * factor sign-in required only by an owner who has it; abilities the catalog offers), without
   * saving anything: what the team page shows the effect of before it is saved.
   */
  async proposePolicy(
    actor: Actor,
    teamId: number,
    input: PolicyInput,
  ): Promise<{ team: Team; policy: TeamPolicyValues }> {
    const ownerId = accountOf(actor);
    const allowed =
      input.allowedAbilities === undefined ? undefined : this.allowedOf(input.allowedAbilities);
    const { team, role } = await this.access.requireMembership(ownerId, teamId);
    if (role !== 'owner') throw new OwnerOnlyError("change the team's policy");
    if (input.requireTwoFactor && !(await this.teams.hasTwoFactor(ownerId))) {
      throw new ValidationError({
        require_two_factor:
          'Turn on two-factor sign-in for yourself first (Account Settings, Security): the team would refuse your own tokens.',
      });
    }
    const policy = {
      requireTwoFactor: input.requireTwoFactor,
      tokenMaxLifetimeDays: input.tokenMaxLifetimeDays,
      allowedAbilities: allowed === undefined ? (team.allowedAbilities ?? null) : allowed,
    };
    return { team, policy };
  }

  /**
   * The owner sets the team's policy: two-factor sign-in required of every member whose
   * tokens act in it, a maximum token lifetime, and the abilities tokens acting in it may use
   * (left out: as they are; every ability of the catalog: no limit). Requiring two-factor
   * sign-in needs the owner's own on; turning it on mails every member without it. Takes
   * effect on the very next API request (the policy is read with each token). A change is
   * published (`team.policy_changed`) in its transaction: the owners of the tokens it refuses
   * are told by mail with it.
   */
  async setPolicy(actor: Actor, teamId: number, input: PolicyInput): Promise<Team> {
    const ownerId = accountOf(actor);
    const { team, policy: proposed } = await this.proposePolicy(actor, teamId, input);
    return this.transactions.run(async (m) => {
      const locked = await this.teams.lockForUpdate(m, team.id);
      if (!locked) throw new TeamNotFoundError();
      if (locked.ownerId !== ownerId) throw new OwnerOnlyError("change the team's policy");
      const previous = policyValuesOf(locked);
      const policy = {
        ...proposed,
        allowedAbilities:
          input.allowedAbilities === undefined
            ? previous.allowedAbilities
            : proposed.allowedAbilities,
      };
      await this.teams.setPolicy(m, team.id, policy);
      const listed = (names: string[] | null) => (names === null ? 'all' : names.join(' '));
      const changed =
        previous.requireTwoFactor !== policy.requireTwoFactor ||
        previous.tokenMaxLifetimeDays !== policy.tokenMaxLifetimeDays ||
        listed(previous.allowedAbilities) !== listed(policy.allowedAbilities);
      if (policy.requireTwoFactor && !previous.requireTwoFactor) {
        for (const userId of await this.teams.findMembersWithoutTwoFactor(m, team.id)) {
          await this.notices.send(m, userId, 'two-factor-required', team);
        }
      }
      if (changed) {
        const changedTeam = { id: team.id, name: team.name };
        await this.events.publish(m, 'team.policy_changed', {
          actor,
          team: changedTeam,
          previous,
          policy,
        });
        this.audit.recordIn(m, actor, {
          event: 'team.policy_changed',
          teamId: team.id,
          target: { type: 'team', id: team.id },
          detail: {
            team: team.name,
            require_two_factor: policy.requireTwoFactor,
            token_max_lifetime_days: policy.tokenMaxLifetimeDays,
            allowed_abilities: listed(policy.allowedAbilities),
            previous_require_two_factor: previous.requireTwoFactor,
            previous_token_max_lifetime_days: previous.tokenMaxLifetimeDays,
            previous_allowed_abilities: listed(previous.allowedAbilities),
          },
        });
      }
      return Object.assign(locked, policy);
    });
  }

  /**
   * The abilities a policy allows, in the catalog's order: null (no limit) for all of them.
   * A name the catalog does not offer, or none at all, is refused.
   */
  private allowedOf(names: string[] | null): string[] | null {
    if (names === null) return null;
    const unknown = this.catalog.retired(names);
    if (unknown.length > 0) {
      throw new ValidationError({
        allowed_abilities: `This deployment offers no ability ${unknown.map((a) => `"${a}"`).join(', ')}.`,
      });
    }
    const allowed = this.catalog.offered(names);
    if (allowed.length === 0) {
      throw new ValidationError({ allowed_abilities: 'Allow tokens at least one ability.' });
    }
    return allowed.length === this.catalog.entries.length ? null : allowed;
  }
}
