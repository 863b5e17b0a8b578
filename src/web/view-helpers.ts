import type { HelperOptions } from 'handlebars';

import hbs from 'hbs';
import { withArticle } from '../common/words.js';

type Root = {
  flash?: { old?: Record<string, unknown>; fields?: Record<string, string>; form?: string };
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

/** Escaped text that may break every 16 characters when it runs over 20 without a break. */
function breakableRun(text: string): string {
  const escape = hbs.handlebars.escapeExpression;
  if (text.length <= 20) return escape(text);
  return text
    .match(/.{1,16}/gsu)!
    .map(escape)
    .join('<wbr>');
}

const root = (options: HelperOptions): Root => (options.data as { root: Root }).root;

/** Handlebars helpers the pages use; registered once by configureApp. */
export const VIEW_HELPERS = {
  eq: (a: unknown, b: unknown): boolean => a === b,

  includes: (list: unknown, value: unknown): boolean => Array.isArray(list) && list.includes(value),

  /**
   * An e-mail address that may break after its @, before each dot and, in a run of more than
   * 20 characters between them, every 16: for narrow table cells, where breaking anywhere would
   * cut a word in two, and an address with a long run would widen its table past its card.
   */
  breakableEmail(address: unknown): InstanceType<typeof hbs.handlebars.SafeString> {
    const escape = hbs.handlebars.escapeExpression;
    const parts = (text: string) => text.split('.').map(breakableRun).join('<wbr>.');
    const text = String(address ?? '');
    const at = text.lastIndexOf('@');
    const html =
      at < 0 ? escape(text) : `${parts(text.slice(0, at))}@<wbr>${parts(text.slice(at + 1))}`;
    return new hbs.handlebars.SafeString(`<span class="email">${html}</span>`);
  },

  /**
   * A person's name that may break, in a word of more than 20 characters, every 16: a name is
   * theirs to choose, and one long word would widen a table past its card. Shorter words stay
   * whole, as they do everywhere.
   */
  breakableName(name: unknown): InstanceType<typeof hbs.handlebars.SafeString> {
    const html = String(name ?? '')
      .split(/(\s+)/u)
      .map(breakableRun)
      .join('');
    return new hbs.handlebars.SafeString(html);
  },

  /**
   * A description written for the API's docs, where `code` is in backticks: on a page the
   * backticks become code spans, and everything else stays text.
   */
  withCode(text: unknown): InstanceType<typeof hbs.handlebars.SafeString> {
    const escape = hbs.handlebars.escapeExpression;
    const html = String(text ?? '')
      .split(/`([^`]+)`/u)
      .map((part, i) => (i % 2 === 1 ? `<code>${escape(part)}</code>` : escape(part)))
      .join('');
    return new hbs.handlebars.SafeString(html);
  },

  /** "a member", "an admin": a role (or another noun) as a sentence says it. */
  withArticle: (noun: unknown): string => withArticle(String(noun)),

  /** Whether any item of the list has `key` set (a table with a form in some rows). */
  some: (list: unknown, key: string): boolean =>
    Array.isArray(list) && list.some((item) => Boolean((item as Record<string, unknown>)?.[key])),

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

  /** Its arguments as one string (for an attribute built from several values). */
  concat(...parts: unknown[]): string {
    parts.pop();
    return parts.join('');
  },

  /**
   * A plain-text file as a `data:` address, for a link with `download`: a title, a line of
   * explanation, then one line per item. What the page shows once is saved with no request.
   */
  textFileUrl(title: string, explanation: string, lines: unknown): string {
    const items = Array.isArray(lines) ? lines.map(String) : [];
    const text = [title, explanation, '', ...items, ''].join('\n');
    return `data:text/plain;charset=utf-8,${encodeURIComponent(text)}`;
  },

  fieldError: (name: string, options: HelperOptions): string | undefined =>
    root(options).flash?.fields?.[name],

  /**
   * True when the refused form was the one sent to this address (its parts joined), for pages
   * with several forms whose fields share a name: the errors and values go back to that one.
   */
  sentForm(...parts: unknown[]): boolean {
    const options = parts.pop() as HelperOptions;
    return root(options).flash?.form === parts.join('');
  },

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
