import { isIP } from 'node:net';
import { EnvReader, integer } from './env-reader.js';

/** An address range in CIDR notation, as WEBHOOK_ALLOWED_RANGES names it. */
export interface AddressRange {
  network: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

export interface WebhooksConfig {
  /**
   * Ranges webhooks may be sent to although they are loopback, private or link-local
   * (WEBHOOK_ALLOWED_RANGES, e.g. `127.0.0.0/8,::1/128`); plain HTTP is accepted to these
   * outside development too. None by default.
   */
  allowedRanges: AddressRange[];
  /** How long one delivery may take, connecting and answering (WEBHOOK_TIMEOUT_MS). */
  timeoutMs: number;
  /** Whether plain HTTP is accepted for any address (NODE_ENV=development only). */
  plainHttpAnywhere: boolean;
}

export function parseRanges(raw: string): AddressRange[] | { error: string } {
  const ranges: AddressRange[] = [];
  for (const item of raw.split(',').map((s) => s.trim())) {
    if (item === '') continue;
    const match = /^([^/]+)\/(\d{1,3})$/.exec(item);
    const family = match ? isIP(match[1]) : 0;
    const prefix = match ? Number(match[2]) : NaN;
    if (!match || family === 0 || prefix > (family === 4 ? 32 : 128)) {
      return { error: `"${item}" is not a range such as 127.0.0.0/8 or ::1/128` };
    }
    ranges.push({ network: match[1], prefix, family: family === 4 ? 'ipv4' : 'ipv6' });
  }
  return ranges;
}

export function readWebhooksConfig(r: EnvReader, nodeEnv: string): WebhooksConfig {
  return {
    allowedRanges: r.read('WEBHOOK_ALLOWED_RANGES', '', parseRanges),
    timeoutMs: r.read('WEBHOOK_TIMEOUT_MS', '10000', integer(100, 60_000)),
    plainHttpAnywhere: nodeEnv === 'development',
  };
}
