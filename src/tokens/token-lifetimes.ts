import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../clock/clock.js';
import { accountOf, knownOf, type Actor, type PersonSnapshot } from '../common/actor.js';
import { ValidationError } from '../common/errors/domain.error.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { TOKEN_LIFETIME_LIMIT_DAYS } from '../config/tokens.config.js';
import { exceedsMaxLifetime } from './team-policy.js';
import {
  governing,
  TokensRepository,
  type GoverningTeam,
  type TeamPolicy,
} from './tokens.repository.js';

/**
 * How long a token may live: the rules (its limit in a team, the choices a form offers, a chosen
 * expiry), then `TokenLifetimes`, which applies them to the teams a token may act in.
 */

const DAY_MS = 86_400_000;

/** The lifetimes the pages offer, in days, besides a date of one's own and (maybe) none. */
export const EXPIRY_DAY_CHOICES = [7, 30, 90, 365] as const;
/** What a new token's lifetime is when nobody chooses (the pages' first choice, the CLI's default). */
export const DEFAULT_DAYS = 30;

/** When a new token should stop working, as asked: a number of days, a date, or neither. */
export interface ExpiryRequest {
  expiresInDays?: number;
  /** A UTC date, YYYY-MM-DD: the token works until that day begins. */
  expiresOn?: string;
}

/**
 * The longest a token may live where it acts: the smaller of the deployment's maximum
 * (TOKEN_MAX_LIFETIME_DAYS) and that of the team it acts in, in whole days; null when neither
 * has one.
 */
export interface LifetimeLimit {
  maxDays: number | null;
  /** The team whose maximum it is (named in refusals); null when it is the deployment's. */
  team: string | null;
}

/** The limit for a token acting in `team` (its pinned team, or its person's current team). */
export function lifetimeLimit(
  deploymentMaxDays: number | null,
  team: { name: string; policy: Pick<TeamPolicy, 'tokenMaxLifetimeDays'> } | null,
): LifetimeLimit {
  const teamMax = team?.policy.tokenMaxLifetimeDays ?? null;
  if (teamMax !== null && (deploymentMaxDays === null || teamMax <= deploymentMaxDays)) {
    return { maxDays: teamMax, team: team!.name };
  }
  return { maxDays: deploymentMaxDays, team: null };
}

const limitInWords = (limit: LifetimeLimit): string =>
  limit.team
    ? `${limit.team} allows tokens of at most ${limit.maxDays} days`
    : `Tokens may live at most ${limit.maxDays} days`;

/**
 * Why a token may not be given a lifetime of `days` whole days (null: it never expires) under
 * `limit`; null when it may. Creating a token and regenerating one both ask this.
 */
export function lifetimeRefusal(days: number | null, limit: LifetimeLimit): string | null {
  if (!exceedsMaxLifetime(days, limit.maxDays)) return null;
  return days === null ? `${limitInWords(limit)}: choose an expiry.` : `${limitInWords(limit)}.`;
}

/** What a new token's lifetime is when nobody chooses: 30 days, or the maximum when less. */
export function defaultLifetimeDays(limit: LifetimeLimit): number {
  return Math.min(DEFAULT_DAYS, limit.maxDays ?? DEFAULT_DAYS);
}

/** What the create form may offer under a limit. */
export interface ExpiryOptions {
  /** `7`, `30`… up to the maximum, then `custom`, then `none` when there is no maximum. */
  choices: { value: string; label: string }[];
  defaultChoice: string;
  /** The first and last dates the date field accepts (YYYY-MM-DD). */
  firstDate: string;
  lastDate: string;
  maxLifetimeDays: number | null;
  /** The limit in words, for the form's hint; null without one. */
  hint: string | null;
}

const utcDate = (at: number): string => new Date(at).toISOString().slice(0, 10);
const startOfUtcDay = (at: number): number => at - (at % DAY_MS);

export function expiryOptions(limit: LifetimeLimit, now: number): ExpiryOptions {
  const maxDays = limit.maxDays;
  const days = EXPIRY_DAY_CHOICES.filter((d) => maxDays === null || d <= maxDays);
  const choices = [
    ...days.map((d) => ({ value: String(d), label: `In ${d} days` })),
    { value: 'custom', label: 'On a date…' },
    ...(maxDays === null ? [{ value: 'none', label: 'Never (not recommended)' }] : []),
  ];
  const fallback = days.includes(DEFAULT_DAYS as never) ? DEFAULT_DAYS : days.at(-1);
  const today = startOfUtcDay(now);
  return {
    choices,
    defaultChoice: fallback === undefined ? 'custom' : String(fallback),
    firstDate: utcDate(today + DAY_MS),
    lastDate: utcDate(today + (maxDays ?? TOKEN_LIFETIME_LIMIT_DAYS) * DAY_MS),
    maxLifetimeDays: maxDays,
    hint:
      maxDays === null
        ? null
        : limit.team
          ? `${limitInWords(limit)}.`
          : `Tokens here expire within ${maxDays} days at most.`,
  };
}

/** A new token's expiry as chosen, and its lifetime in whole days as chosen. */
export interface ChosenExpiry {
  /** Null: it never expires. */
  expiresAt: Date | null;
  /** The days asked for, or those from today (UTC) to the date asked for; null for never. */
  days: number | null;
}

/**
 * When a new token expires, as asked. Refused (422, naming the form's field) when the date is
 * not a real one or not after today, and when the lifetime is more than `limit` allows ("never"
 * whenever there is a maximum): a date counts the days from today, so the last day the form's
 * date field offers is allowed.
 */
export function resolveExpiry(
  request: ExpiryRequest,
  limit: LifetimeLimit,
  now: number,
): ChosenExpiry {
  if (request.expiresOn !== undefined) {
    const at = Date.parse(`${request.expiresOn}T00:00:00Z`);
    if (Number.isNaN(at) || utcDate(at) !== request.expiresOn) {
      throw new ValidationError({ expires_at: 'Enter a real date, as YYYY-MM-DD.' });
    }
    if (at <= now) throw new ValidationError({ expires_at: 'Choose a date after today.' });
    const days = (at - startOfUtcDay(now)) / DAY_MS;
    const most = limit.maxDays ?? TOKEN_LIFETIME_LIMIT_DAYS;
    if (days > most) {
      const last = expiryOptions(limit, now).lastDate;
      throw new ValidationError({
        expires_at: limit.team
          ? `${limitInWords(limit)}: choose ${last} at the latest.`
          : `Choose a date at most ${most} days from today (${last} at the latest).`,
      });
    }
    return { expiresAt: new Date(at), days };
  }
  const days = request.expiresInDays ?? null;
  const refusal = lifetimeRefusal(days, limit);
  if (refusal) throw new ValidationError({ expires_in_days: refusal });
  return { expiresAt: expiryAfter(days, now), days };
}

/**
 * The lifetime a regenerated token keeps when none is chosen: the one it was given (at its
 * creation or last regeneration), cut to the maximum; a token that never expired keeps never
 * expiring unless there is a maximum, which it then gets.
 */
export function keptLifetimeDays(days: number | null, maxDays: number | null): number | null {
  if (maxDays === null) return days;
  return days === null ? maxDays : Math.min(days, maxDays);
}

/** When a lifetime of `days` whole days (null: none) counted from `now` ends. */
export function expiryAfter(days: number | null, now: number): Date | null {
  return days === null ? null : new Date(now + days * DAY_MS);
}

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
