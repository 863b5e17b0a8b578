import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { compile as compileTrust } from 'proxy-addr';
import type { NodeEnv } from './app.config.js';
import { EnvReader, integer, text } from './env-reader.js';
import { trustsEveryAddress } from './trusted-ranges.js';

export interface WebConfig {
  sessionSecret: string;
  sessionIdleMinutes: number;
  sessionAbsoluteHours: number;
  /** Express's `trust proxy` setting: false, a hop count, or a list of addresses (true outside production). */
  trustProxy: boolean | number | string;
}

const MIN_SECRET_LENGTH = 32;
/** What a secret of 32 random bytes, base64 or hex, scores at the least (and a repeated word does not). */
const MIN_SECRET_BITS = 128;
const MAKE_SECRET = 'make one with: openssl rand -base64 32';

/**
 * The entropy of a string estimated from how often each of its characters occurs: 32 random
 * bytes in base64 score ~210 bits, in hex ~240; "aaaa…" scores 0. It cannot see patterns longer
 * than one character, so it only catches the plainly weak.
 */
export function estimatedBits(value: string): number {
  const counts = new Map<string, number>();
  for (const c of value) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) bits -= n * Math.log2(n / value.length);
  return bits;
}

/**
 * The most proxy hops TRUST_PROXY may count in production. Client, CDN, load balancer and ingress
 * make three in front of Tessera; five leaves room for two more. A count above the proxies really
 * in front makes Express take an entry the client wrote itself in X-Forwarded-For (past the
 * proxies' own entries it reaches the client's), so a large count is never a safe margin.
 */
export const MAX_PROXY_HOPS = 5;

function hopCount(r: EnvReader, production: boolean, hops: number): number | { error: string } {
  if (hops <= MAX_PROXY_HOPS) return hops;
  const why = `${hops} proxy hops is more than any real chain of proxies, and each hop counted beyond the proxies in front lets a client choose its own address through X-Forwarded-For (and escape every per-IP limit)`;
  if (production) {
    return {
      error: `${why}; give the number of proxies in front (usually 1, at most ${MAX_PROXY_HOPS}) or their addresses`,
    };
  }
  r.warnings.push(`TRUST_PROXY: ${why}; production refuses more than ${MAX_PROXY_HOPS}.`);
  return hops;
}

const trustProxy =
  (r: EnvReader, production: boolean) =>
  (raw: string): boolean | number | string | { error: string } => {
    if (['false', '0', ''].includes(raw)) return false;
    if (raw === 'true') {
      const why =
        'TRUST_PROXY=true believes the leftmost X-Forwarded-For, which any client can set to escape every per-IP limit';
      if (production)
        return {
          error: `${why}; give the number of proxy hops in front (usually 1) or their addresses`,
        };
      r.warnings.push(`${why}. Use a hop count (TRUST_PROXY=1) or the proxies' addresses.`);
      return true;
    }
    if (/^\d+$/.test(raw)) return hopCount(r, production, Number(raw));
    const list = raw.split(',').map((a) => a.trim());
    try {
      compileTrust(list);
    } catch (error) {
      return {
        error: `${(error as Error).message}: give a hop count, or addresses and subnets such as 10.0.0.0/8, loopback, uniquelocal (trusting every address is not allowed)`,
      };
    }
    const every = trustsEveryAddress(list);
    if (every) {
      const why = `these ranges together trust every ${every} address, so any client could choose its own address (and escape every per-IP limit) through X-Forwarded-For`;
      if (production) return { error: `${why}; list only the proxies in front` };
      r.warnings.push(`TRUST_PROXY: ${why}.`);
    }
    return list.join(',');
  };

/**
 * Development's session secret: made once and kept in `file` (under data/, which git ignores),
 * so that restarting the server neither signs everyone out nor leaves two-factor secrets
 * unreadable. Two processes starting at once agree: the file is created only if absent.
 */
function developmentSecret(r: EnvReader, file: string): string | undefined {
  try {
    if (!existsSync(file)) {
      mkdirSync(dirname(file), { recursive: true });
      try {
        writeFileSync(file, `${randomBytes(32).toString('base64url')}\n`, {
          mode: 0o600,
          flag: 'wx',
        });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    }
    const secret = readFileSync(file, 'utf8').trim();
    if (secret.length >= MIN_SECRET_LENGTH) return secret;
    r.problems.push(
      `SESSION_SECRET_FILE: ${file} holds no usable secret; delete it to make a new one`,
    );
  } catch (error) {
    r.warnings.push(
      `SESSION_SECRET is not set and ${file} cannot be used (${(error as Error).message}): using a random secret, so sign-ins end when the process restarts`,
    );
  }
  return undefined;
}

export function readWebConfig(r: EnvReader, nodeEnv: NodeEnv): WebConfig {
  const production = nodeEnv === 'production';
  const secret = r.env.SESSION_SECRET?.trim() ?? '';
  const secretFile = r.read('SESSION_SECRET_FILE', 'data/session-secret', text);
  if (secret && secret.length < MIN_SECRET_LENGTH) {
    r.problems.push(
      `SESSION_SECRET: must be at least ${MIN_SECRET_LENGTH} characters; ${MAKE_SECRET}`,
    );
  } else if (secret && estimatedBits(secret) < MIN_SECRET_BITS) {
    const weak = `SESSION_SECRET: too predictable (about ${Math.floor(estimatedBits(secret))} bits); ${MAKE_SECRET}`;
    if (production) r.problems.push(weak);
    else r.warnings.push(weak);
  } else if (!secret && production) {
    r.problems.push(`SESSION_SECRET: required when NODE_ENV=production; ${MAKE_SECRET}`);
  }
  let kept: string | undefined;
  if (!secret && nodeEnv === 'development') {
    kept = developmentSecret(r, secretFile);
    if (kept) {
      r.warnings.push(
        `SESSION_SECRET is not set: using the development secret kept in ${secretFile}; set SESSION_SECRET (the same on every instance) for anything else`,
      );
    }
  } else if (!secret && !production) {
    r.warnings.push(
      'SESSION_SECRET is not set: using a random one, so sign-ins end when the process restarts, instances cannot share sessions, and two-factor secrets set up now cannot be read after a restart (recovery codes still work)',
    );
  }
  return {
    sessionSecret: secret || kept || randomBytes(32).toString('base64url'),
    sessionIdleMinutes: r.read('SESSION_IDLE_TIMEOUT_MINUTES', '120', integer(1, 525_600)),
    sessionAbsoluteHours: r.read('SESSION_ABSOLUTE_TIMEOUT_HOURS', '24', integer(1, 8_760)),
    trustProxy: r.read('TRUST_PROXY', 'false', trustProxy(r, production)),
  };
}
