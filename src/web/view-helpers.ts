import type { HelperOptions } from 'handlebars';

import hbs from 'hbs';

type Root = {
  flash?: { old?: Record<string, unknown>; fields?: Record<string, string> };
  /**
   * When the page is drawn (epoch ms), for times relative to it: the app's clock, which every
   * render reads (configureApp).
   */
  now?: number;
};

const MINUTE_MS = 60_000;

const inWords = new Intl.RelativeTimeFormat('en', { numeric: 'always' });

/** How long ago (or how soon) `at` is from `now`, in the words people use. */
export function relativeTime(at: number, now: number): string {
  const ms = Math.abs(now - at);
  const sign = at <= now ? -1 : 1;
  if (ms < 45_000) return sign < 0 ? 'just now' : 'in under a minute';
  if (ms < 90 * MINUTE_MS)
    return inWords.format(sign * Math.max(1, Math.round(ms / MINUTE_MS)), 'minute');
  if (ms < 36 * 60 * MINUTE_MS)
    return inWords.format(sign * Math.round(ms / (60 * MINUTE_MS)), 'hour');
  if (ms < 45 * 24 * 60 * MINUTE_MS) {
    return inWords.format(sign * Math.round(ms / (24 * 60 * MINUTE_MS)), 'day');
  }
  return `on ${new Date(at).toISOString().slice(0, 10)}`;
}

const exactTime = (value: Date): string =>
  `${value.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

const root = (options: HelperOptions): Root => (options.data as { root: Root }).root;

/** Handlebars helpers the pages use; registered once by configureApp. */
export const VIEW_HELPERS = {
  eq: (a: unknown, b: unknown): boolean => a === b,

  includes: (list: unknown, value: unknown): boolean => Array.isArray(list) && list.includes(value),

  /** The value the person typed before the form was refused, or the fallback. */
  old(name: string, ...rest: unknown[]): unknown {
    const options = rest.pop() as HelperOptions;
    const value = root(options).flash?.old?.[name];
    return value !== undefined ? value : rest[0];
  },

  /** True when a refused form sent this value back (for checkboxes and options). */
  oldHas(name: string, value: string, fallback: boolean, options: HelperOptions): boolean {
    const old = root(options).flash?.old;
    if (!old) return fallback;
    const sent = old[name];
    return Array.isArray(sent) ? sent.includes(value) : sent === value;
  },

  /** For options: the one value sent back, or the fallback when the form was not refused. */
  oldIs(name: string, value: string, fallback: boolean, options: HelperOptions): boolean {
    const old = root(options).flash?.old;
    return old ? old[name] === value : fallback;
  },

  fieldError: (name: string, options: HelperOptions): string | undefined =>
    root(options).flash?.fields?.[name],

  /** A date as people read it, in UTC. */
  date(value: unknown): string {
    if (!(value instanceof Date) || Number.isNaN(value.getTime())) return 'never';
    return exactTime(value);
  },

  /** The day of a time (UTC), in a `<time>` element with the exact time on hover: for tables. */
  dayOf(value: unknown): string | InstanceType<typeof hbs.handlebars.SafeString> {
    if (!(value instanceof Date) || Number.isNaN(value.getTime())) return 'never';
    return new hbs.handlebars.SafeString(
      `<time datetime="${value.toISOString()}" title="${exactTime(value)}">${value.toISOString().slice(0, 10)}</time>`,
    );
  },

  /**
   * A time relative to now ("3 minutes ago"), in a `<time>` element that carries the exact
   * time for machines and, on hover, for people.
   */
  ago(
    value: unknown,
    options: HelperOptions,
  ): string | InstanceType<typeof hbs.handlebars.SafeString> {
    if (!(value instanceof Date) || Number.isNaN(value.getTime())) return 'never';
    const now = root(options).now;
    if (now === undefined) throw new Error('{{ago}} is drawn without `now` (see configureApp)');
    const exact = exactTime(value);
    return new hbs.handlebars.SafeString(
      `<time datetime="${value.toISOString()}" title="${exact}">${relativeTime(value.getTime(), now)}</time>`,
    );
  },
};
