import { ValidationError } from '../common/errors/domain.error.js';
import { TOKEN_LIFETIME_LIMIT_DAYS } from '../config/tokens.config.js';

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

/** What the create form may offer under the configured maximum. */
export interface ExpiryOptions {
  /** `7`, `30`… up to the maximum, then `custom`, then `none` when there is no maximum. */
  choices: { value: string; label: string }[];
  defaultChoice: string;
  /** The first and last dates the date field accepts (YYYY-MM-DD). */
  firstDate: string;
  lastDate: string;
  maxLifetimeDays: number | null;
}

const utcDate = (at: number): string => new Date(at).toISOString().slice(0, 10);
const startOfUtcDay = (at: number): number => at - (at % DAY_MS);

export function expiryOptions(maxDays: number | null, now: number): ExpiryOptions {
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
  };
}

/**
 * When a new token expires, or null for never. Refused (422, naming the form's field) when the
 * date is not a real one, not after today, or past the maximum; and "never" when there is a
 * maximum.
 */
export function resolveExpiry(
  request: ExpiryRequest,
  maxDays: number | null,
  now: number,
): Date | null {
  const limit = maxDays ?? TOKEN_LIFETIME_LIMIT_DAYS;
  if (request.expiresOn !== undefined) {
    const at = Date.parse(`${request.expiresOn}T00:00:00Z`);
    if (Number.isNaN(at) || utcDate(at) !== request.expiresOn) {
      throw new ValidationError({ expires_at: 'Enter a real date, as YYYY-MM-DD.' });
    }
    if (at <= now) throw new ValidationError({ expires_at: 'Choose a date after today.' });
    if (at > startOfUtcDay(now) + limit * DAY_MS) {
      throw new ValidationError({
        expires_at: `Choose a date at most ${limit} days from today (${expiryOptions(maxDays, now).lastDate} at the latest).`,
      });
    }
    return new Date(at);
  }
  if (request.expiresInDays !== undefined) {
    if (request.expiresInDays > limit) {
      throw new ValidationError({ expires_in_days: `Tokens may live at most ${limit} days.` });
    }
    return new Date(now + request.expiresInDays * DAY_MS);
  }
  if (maxDays !== null) {
    throw new ValidationError({
      expires_in_days: `Tokens must expire within ${maxDays} days here: choose an expiry.`,
    });
  }
  return null;
}

/**
 * A regenerated token's new expiry: the lifetime it was given (from its creation, or from its
 * last regeneration) counted again from now, cut to the maximum; a token that never expired
 * keeps never expiring unless there is a maximum, which it then gets.
 */
export function regeneratedExpiry(
  token: { createdAt: Date; regeneratedAt: Date | null; expiresAt: Date | null },
  maxDays: number | null,
  now: number,
): Date | null {
  const max = maxDays === null ? Infinity : maxDays * DAY_MS;
  const lifetime = token.expiresAt
    ? token.expiresAt.getTime() - (token.regeneratedAt ?? token.createdAt).getTime()
    : Infinity;
  const kept = Math.min(lifetime, max);
  return kept === Infinity ? null : new Date(now + kept);
}
