import type { HelperOptions } from 'handlebars';

type Root = { flash?: { old?: Record<string, unknown>; fields?: Record<string, string> } };

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
    return `${value.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  },
};
