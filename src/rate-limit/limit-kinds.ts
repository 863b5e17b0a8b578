/**
 * Where a counter lives. `security` holds the failure counts of sign-in, two-factor codes,
 * passkeys and sudo mode: no other traffic can push them out (see MemoryRateLimitStorage).
 * `traffic` holds everything else.
 */
export type CounterPool = 'security' | 'traffic';

/** What a limit does with a hit its counters (Redis) could not count. */
export type WhenUncounted = 'refuse' | 'allow';

/** What became of a hit that could not be counted, as the metrics say it. */
export type UncountedOutcome = 'refused' | 'allowed';

/**
 * Every limit, by the name the metrics give it: the pool its counters live in, and what it does
 * when Redis cannot count a hit. A limit that keeps a secret from being guessed, or keeps Tessera
 * from mailing addresses a client names, refuses (503 with Retry-After): letting hits through
 * uncounted would lift it for as long as Redis is away, and nothing in process can hold a limit
 * that several instances share. A limit that only bounds load lets the request through
 * uncounted: refusing would take the API, leak reports and passkey prompts down with Redis.
 */
export const LIMIT_KINDS = {
  /** Wrong passwords at sign-in, per IP, account and both. */
  'sign-in': { pool: 'security', whenUncounted: 'refuse' },
  /** Passwords typed again in sudo mode: the sign-in counters. */
  sudo: { pool: 'security', whenUncounted: 'refuse' },
  /** Passkey checks, to sign in or confirm: the sign-in counter of the IP. */
  passkey: { pool: 'security', whenUncounted: 'refuse' },
  /** Wrong codes, per pending sign-in and per account. */
  'two-factor': { pool: 'security', whenUncounted: 'refuse' },
  /** Changes of address an account asks for (each mails the new one). */
  'email-change': { pool: 'traffic', whenUncounted: 'refuse' },
  /** Test events an account sends (each a request to a URL the account chose). */
  'webhook-tests': { pool: 'traffic', whenUncounted: 'refuse' },
  /** Reset links, registration notices and address-change links mailed to one address. */
  'account-mail': { pool: 'traffic', whenUncounted: 'refuse' },
  /** The routes' own limits (http/route-limit.ts). */
  register: { pool: 'traffic', whenUncounted: 'refuse' },
  'forgot-password': { pool: 'traffic', whenUncounted: 'refuse' },
  'verify-email-resend': { pool: 'traffic', whenUncounted: 'refuse' },
  'sign-up-resend': { pool: 'traffic', whenUncounted: 'refuse' },
  'team-invites': { pool: 'traffic', whenUncounted: 'refuse' },
  'passkey-challenges': { pool: 'traffic', whenUncounted: 'allow' },
  'token-reports': { pool: 'traffic', whenUncounted: 'allow' },
  /** API requests whose token failed, per client IP. */
  'api-client': { pool: 'traffic', whenUncounted: 'allow' },
  /** API requests of one token. */
  'api-token': { pool: 'traffic', whenUncounted: 'allow' },
  /** Introspections one token asks for (a service checking the tokens it is sent). */
  'api-introspections': { pool: 'traffic', whenUncounted: 'allow' },
} as const satisfies Record<string, { pool: CounterPool; whenUncounted: WhenUncounted }>;

export type LimitKind = keyof typeof LIMIT_KINDS;

/** Told of each hit that could not be counted, and what its limit did with it (the metrics). */
export type UncountedHits = (kind: LimitKind, outcome: UncountedOutcome) => void;

export function uncountedOutcomeOf(kind: LimitKind): UncountedOutcome {
  return LIMIT_KINDS[kind].whenUncounted === 'refuse' ? 'refused' : 'allowed';
}
