import { EnvReader, integer } from './env-reader.js';

/** The longest lifetime a token may be given, in days: ten years, as the API's own limit. */
export const TOKEN_LIFETIME_LIMIT_DAYS = 3650;

export interface TokensConfig {
  /**
   * The longest a new or regenerated token may live, in days (TOKEN_MAX_LIFETIME_DAYS); null
   * when unset: then "no expiry" may be chosen too.
   */
  maxLifetimeDays: number | null;
  /** How long security log events are kept, in days (AUDIT_RETENTION_DAYS, 365 by default). */
  auditRetentionDays: number;
}

const optionalDays = (raw: string): number | null | { error: string } =>
  raw === '' ? null : integer(1, TOKEN_LIFETIME_LIMIT_DAYS)(raw);

export function readTokensConfig(r: EnvReader): TokensConfig {
  return {
    maxLifetimeDays: r.read('TOKEN_MAX_LIFETIME_DAYS', '', optionalDays),
    auditRetentionDays: r.read('AUDIT_RETENTION_DAYS', '365', integer(1, 36500)),
  };
}
