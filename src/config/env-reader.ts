type Env = Record<string, string | undefined>;

/**
 * A URL with what stands before its host masked, however it is written (`scheme://user:pass@`,
 * or mistyped `scheme:/user:pass@`, `scheme:user:pass@`): the user is kept, the password becomes
 * `***`; without a `:` there, all of it is masked, since it may be a password alone.
 */
export function redactUrl(url: string): string {
  const at = url.lastIndexOf('@');
  if (at < 0) return url;
  const scheme = /^[a-z][a-z0-9+.-]*:\/*/i.exec(url)?.[0] ?? '';
  if (scheme.length > at) return url;
  const userinfo = url.slice(scheme.length, at);
  const colon = userinfo.indexOf(':');
  const shown = colon < 0 ? '***' : `${userinfo.slice(0, colon)}:***`;
  return `${scheme}${shown}${url.slice(at)}`;
}
type Parsed<T> = T | { error: string };

/** Reads variables one by one and collects every problem, so one boot error names them all. */
export class EnvReader {
  readonly problems: string[] = [];
  /** Settings that work but should not be left as they are; logged at start. */
  readonly warnings: string[] = [];
  constructor(readonly env: Env) {}

  /** `shown` masks what a message may print of the value (a password in a URL, say). */
  read<T>(
    name: string,
    fallback: string,
    parse: (raw: string) => Parsed<T>,
    shown: (raw: string) => string = (raw) => raw,
  ): T {
    const raw = this.env[name]?.trim() || fallback;
    const result = parse(raw);
    if (typeof result === 'object' && result !== null && 'error' in result) {
      this.problems.push(`${name}=${JSON.stringify(shown(raw))}: ${result.error}`);
      return undefined as T;
    }
    return result;
  }
}

export const text = (raw: string): string => raw;

export const integer =
  (min: number, max: number) =>
  (raw: string): Parsed<number> =>
    /^\d+$/.test(raw) && Number(raw) >= min && Number(raw) <= max
      ? Number(raw)
      : { error: `must be a whole number from ${min} to ${max}` };

export const oneOf =
  <T extends string>(allowed: readonly T[]) =>
  (raw: string): Parsed<T> =>
    (allowed as readonly string[]).includes(raw)
      ? (raw as T)
      : { error: `must be one of ${allowed.join(', ')}` };

export const boolean = (raw: string): Parsed<boolean> => {
  if (['true', '1', 'yes'].includes(raw.toLowerCase())) return true;
  if (['false', '0', 'no'].includes(raw.toLowerCase())) return false;
  return { error: 'must be true or false' };
};
