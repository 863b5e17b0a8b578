type Env = Record<string, string | undefined>;
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
