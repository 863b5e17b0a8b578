import { boolean, EnvReader, integer, redactUrl, text } from './env-reader.js';
import { parseTokenReportKeys, type TokenReportKey } from './token-report-keys.js';

export interface RateLimitConfig {
  enabled: boolean;
  windowSeconds: number;
  /** Requests a minute (per window) for one valid token. */
  perToken: number;
  /**
   * Introspections a minute (per window) for one calling token, counted apart from its other
   * requests: a service checks a token for each request it serves.
   */
  introspectionsPerToken: number;
  /** API requests with a missing or bad token, per client IP. */
  anonymousPerIp: number;
  /** Failed sign-ins per client IP, and per account before IPs with failures on it are refused. */
  signInAttempts: number;
  /** Wrong two-factor codes per pending sign-in and per account in 15 minutes. */
  twoFactorAttempts: number;
  /** Registrations per client IP per hour. */
  registrationsPerHour: number;
  /** Team invitations (and member additions) one person may send per hour. */
  teamInvitesPerHour: number;
  /** Password reset requests per client IP per hour. */
  passwordResetsPerHour: number;
  /** Reset links and registration notices one address may be sent per hour. */
  accountMailsPerAddressPerHour: number;
  /** New confirmation links one account may ask for per hour. */
  verificationResendsPerHour: number;
  /** Changes of address (each mails a link to the new one) one account may ask for per hour. */
  emailChangesPerHour: number;
  /** Test events (each a request to the endpoint's URL) one account may send per hour. */
  webhookTestsPerHour: number;
  /** Token reports (signed or not) a secret scanner may send per client IP per hour. */
  tokenReportsPerHour: number;
  /** Passkey challenges (to add one, sign in or confirm with one) per client IP per hour. */
  passkeyChallengesPerHour: number;
  /**
   * Windows the in-process counters keep at most, in each of their two pools: other traffic's
   * oldest go first past that; live security windows never do.
   */
  memoryMaxKeys: number;
  /** Shared counters for every instance; in process when unset. */
  redisUrl: string | null;
  /** Key prefix in Redis, so several deployments can share one server. */
  redisPrefix: string;
  /** The longest a Redis call may take before the hit counts as not counted. */
  redisCommandTimeoutMs: number;
}

export interface SecurityConfig {
  rateLimit: RateLimitConfig;
  /** Origins allowed to call the API from a browser; none by default. */
  corsOrigins: string[];
  shutdownTimeoutMs: number;
  /** The keys leaked-token reports must be signed with; none: reports are not taken (404). */
  tokenReportKeys: TokenReportKey[];
}

const origins = (raw: string): string[] | { error: string } => {
  const list = raw
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  const bad = list.find((o) => !/^https?:\/\/[^/\s*]+$/.test(o));
  return bad
    ? { error: `"${bad}" is not an origin like https://app.example.com (no wildcards)` }
    : list;
};

const redisUrl = (raw: string): string | null | { error: string } =>
  raw === ''
    ? null
    : /^rediss?:\/\//.test(raw)
      ? raw
      : { error: 'must be a redis:// or rediss:// URL' };

export function readSecurityConfig(r: EnvReader): SecurityConfig {
  return {
    rateLimit: {
      enabled: r.read('RATE_LIMIT_ENABLED', 'true', boolean),
      windowSeconds: r.read('RATE_LIMIT_WINDOW_SECONDS', '60', integer(1, 86_400)),
      perToken: r.read('RATE_LIMIT_API_PER_TOKEN', '1000', integer(1, 10_000_000)),
      introspectionsPerToken: r.read(
        'RATE_LIMIT_INTROSPECTIONS_PER_TOKEN',
        '6000',
        integer(1, 10_000_000),
      ),
      anonymousPerIp: r.read('RATE_LIMIT_API_ANONYMOUS_PER_IP', '60', integer(1, 10_000_000)),
      signInAttempts: r.read('RATE_LIMIT_SIGN_IN', '10', integer(1, 10_000_000)),
      twoFactorAttempts: r.read('RATE_LIMIT_TWO_FACTOR', '5', integer(1, 10_000_000)),
      registrationsPerHour: r.read('RATE_LIMIT_REGISTER_PER_HOUR', '20', integer(1, 10_000_000)),
      teamInvitesPerHour: r.read('RATE_LIMIT_TEAM_INVITES_PER_HOUR', '30', integer(1, 10_000_000)),
      passwordResetsPerHour: r.read(
        'RATE_LIMIT_PASSWORD_RESET_PER_HOUR',
        '10',
        integer(1, 10_000_000),
      ),
      accountMailsPerAddressPerHour: r.read(
        'RATE_LIMIT_MAIL_PER_ADDRESS_PER_HOUR',
        '5',
        integer(1, 10_000_000),
      ),
      verificationResendsPerHour: r.read(
        'RATE_LIMIT_VERIFY_RESEND_PER_HOUR',
        '5',
        integer(1, 10_000_000),
      ),
      emailChangesPerHour: r.read('RATE_LIMIT_EMAIL_CHANGE_PER_HOUR', '5', integer(1, 10_000_000)),
      webhookTestsPerHour: r.read(
        'RATE_LIMIT_WEBHOOK_TESTS_PER_HOUR',
        '30',
        integer(1, 10_000_000),
      ),
      tokenReportsPerHour: r.read(
        'RATE_LIMIT_TOKEN_REPORTS_PER_HOUR',
        '600',
        integer(1, 10_000_000),
      ),
      passkeyChallengesPerHour: r.read(
        'RATE_LIMIT_PASSKEY_CHALLENGES_PER_HOUR',
        '120',
        integer(1, 10_000_000),
      ),
      memoryMaxKeys: r.read('RATE_LIMIT_MEMORY_MAX_KEYS', '50000', integer(100, 10_000_000)),
      redisUrl: r.read('REDIS_URL', '', redisUrl, redactUrl),
      redisPrefix: r.read('RATE_LIMIT_REDIS_PREFIX', 'tessera:rl:', text),
      redisCommandTimeoutMs: r.read('REDIS_COMMAND_TIMEOUT_MS', '500', integer(10, 60_000)),
    },
    corsOrigins: r.read('CORS_ORIGINS', '', origins),
    shutdownTimeoutMs: r.read('SHUTDOWN_TIMEOUT_MS', '10000', integer(0, 600_000)),
    // Public keys, but long: the message names the variable and what is wrong, not the value.
    tokenReportKeys: r.read('TOKEN_REPORT_PUBLIC_KEYS', '', parseTokenReportKeys, () => '…'),
  };
}
