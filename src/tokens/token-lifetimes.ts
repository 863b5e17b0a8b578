import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../clock/clock.js';
import { accountOf, knownOf, type Actor, type PersonSnapshot } from '../common/actor.js';
import { ValidationError } from '../common/errors/domain.error.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import {
  defaultLifetimeDays,
  EXPIRY_DAY_CHOICES,
  expiryOptions,
  lifetimeLimit,
  type ExpiryOptions,
  type LifetimeLimit,
} from './token-expiry.js';
import { governing, TokensRepository, type GoverningTeam } from './tokens.repository.js';

/** Where a new token acts (pinned to `team`, or following its person) and how long it may live. */
export interface NewTokenLimit {
  /** The team it is pinned to; null when it follows its person's current team. */
  pinnedTo: GoverningTeam | null;
  limit: LifetimeLimit;
}

/** One choice of the create form's "Acts in", with the expiries a token acting there may have. */
export interface ActingChoice {
  /** As the form sends it: `current`, or a team's id. */
  value: string;
  label: string;
  expiry: ExpiryOptions;
  /** The team's own rules, for the form's hint (null for the current team, whichever it is). */
  team: { name: string; maxDays: number | null; requireTwoFactor: boolean } | null;
}

/** What the create form offers: where a new token may act, and the expiries the page lists. */
export interface CreationChoices {
  acting: ActingChoice[];
  /**
   * Every expiry the deployment allows, each with whether a token following the current team
   * (the form's first choice) may have it: the page's script allows them again for the choice
   * of "Acts in" (`days` is what it compares; null for a date).
   */
  expiries: { value: string; label: string; days: string | null; allowed: boolean }[];
  /** The options of the first choice (the date field's bounds, the default, the hint). */
  expiry: ExpiryOptions;
}

/**
 * How long a token may live where it acts: the deployment's maximum and the maximum of the team
 * it acts in (its pinned team, or its person's current team), for creating and regenerating
 * alike, so that what the pages offer, what the server accepts and what the API refuses agree.
 */
@Injectable()
export class TokenLifetimes {
  private readonly deploymentMaxDays: number | null;

  constructor(
    private readonly tokens: TokensRepository,
    private readonly clock: Clock,
    @Inject(CONFIG) config: Config,
  ) {
    this.deploymentMaxDays = config.tokens.maxLifetimeDays;
  }

  /** The limit of a token acting in `team` (null: in no team). */
  limitIn(team: GoverningTeam | null): LifetimeLimit {
    return lifetimeLimit(this.deploymentMaxDays, team);
  }

  /** What a form may offer a new token pinned to `team` (a service account's). */
  optionsIn(team: GoverningTeam): ExpiryOptions {
    return expiryOptions(this.limitIn(team), this.clock.nowMs());
  }

  /**
   * Where a new token of the person acts and its limit: pinned to `teamId` (one of their teams,
   * else refused), or following their current team.
   */
  async forNewToken(
    userId: number,
    teamId?: number,
    known?: PersonSnapshot,
  ): Promise<NewTokenLimit> {
    if (teamId === undefined) {
      const current = await this.tokens.findCurrentTeamOf(userId, known);
      return { pinnedTo: null, limit: this.limitIn(current) };
    }
    const team = known
      ? (known.memberships.filter((m) => m.team.id === teamId).map((m) => governing(m.team))[0] ??
        null)
      : await this.tokens.findTeamOfMember(userId, teamId);
    if (!team) throw new ValidationError({ team: 'Choose one of your teams.' });
    return { pinnedTo: team, limit: this.limitIn(team) };
  }

  /** The limit of one of the person's tokens: its pinned team's, or their current team's. */
  async forToken(userId: number, tokenId: number): Promise<LifetimeLimit> {
    const pin = await this.tokens.findPin(userId, tokenId);
    const team = pin ? pin.team : await this.tokens.findCurrentTeamOf(userId);
    return this.limitIn(team);
  }

  /** A new token's lifetime when nobody chooses one (the command line's default). */
  async defaultDays(actor: Actor, teamId?: number): Promise<number> {
    return defaultLifetimeDays((await this.forNewToken(accountOf(actor), teamId)).limit);
  }

  /** The create form's choices for the person: the current team first, then their teams. */
  async creationChoices(actor: Actor): Promise<CreationChoices> {
    const userId = accountOf(actor);
    const known = knownOf(actor);
    const [current, teams] = await Promise.all([
      this.tokens.findCurrentTeamOf(userId, known),
      this.tokens.findTeamsOfMember(userId, known),
    ]);
    const now = this.clock.nowMs();
    const acting: ActingChoice[] = [
      {
        value: 'current',
        label: current
          ? `My current team, whichever it is (now ${current.name})`
          : 'My current team, whichever it is',
        expiry: expiryOptions(this.limitIn(current), now),
        team: null,
      },
      ...teams.map((team) => ({
        value: String(team.id),
        label: `${team.name} only`,
        expiry: expiryOptions(this.limitIn(team), now),
        team: {
          name: team.name,
          maxDays: team.policy.tokenMaxLifetimeDays,
          requireTwoFactor: team.policy.requireTwoFactor,
        },
      })),
    ];
    const first = acting[0].expiry;
    const offered = new Set(first.choices.map((c) => c.value));
    const days = new Set<string>(EXPIRY_DAY_CHOICES.map(String));
    return {
      acting,
      expiries: expiryOptions(this.limitIn(null), now).choices.map((choice) => ({
        ...choice,
        days: days.has(choice.value) || choice.value === 'none' ? choice.value : null,
        allowed: offered.has(choice.value),
      })),
      expiry: first,
    };
  }
}
