import { randomBytes } from 'node:crypto';
import { EnvReader, integer } from './env-reader.js';

export interface WebConfig {
  sessionSecret: string;
  /** True when no SESSION_SECRET was set and one was made up for this process. */
  sessionSecretGenerated: boolean;
  sessionIdleMinutes: number;
  sessionAbsoluteHours: number;
  /** Express's `trust proxy` setting: false, true, a hop count, or a list of addresses. */
  trustProxy: boolean | number | string;
}

const MIN_SECRET_LENGTH = 32;

const trustProxy = (raw: string): boolean | number | string | { error: string } => {
  if (['false', '0', ''].includes(raw)) return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  if (/^[\w.:/, -]+$/.test(raw)) return raw;
  return { error: 'must be false, true, a number of proxy hops, or a list of addresses/subnets' };
};

export function readWebConfig(r: EnvReader, production: boolean): WebConfig {
  const secret = r.env.SESSION_SECRET?.trim() ?? '';
  if (secret && secret.length < MIN_SECRET_LENGTH) {
    r.problems.push(`SESSION_SECRET: must be at least ${MIN_SECRET_LENGTH} characters`);
  } else if (!secret && production) {
    r.problems.push(
      `SESSION_SECRET: required when NODE_ENV=production (at least ${MIN_SECRET_LENGTH} random characters)`,
    );
  }
  return {
    sessionSecret: secret || randomBytes(32).toString('base64url'),
    sessionSecretGenerated: !secret,
    sessionIdleMinutes: r.read('SESSION_IDLE_TIMEOUT_MINUTES', '120', integer(1, 525_600)),
    sessionAbsoluteHours: r.read('SESSION_ABSOLUTE_TIMEOUT_HOURS', '24', integer(1, 8_760)),
    trustProxy: r.read('TRUST_PROXY', 'false', trustProxy),
  };
}
