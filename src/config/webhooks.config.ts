import { isIP } from 'node:net';
import { EnvReader, integer } from './env-reader.js';

/** An address range in CIDR notation, as WEBHOOK_ALLOWED_RANGES names it. */
export interface AddressRange {
  network: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/** One of the operator's endpoints listed in WEBHOOK_ENDPOINTS. */
export interface ConfiguredEndpoint {
  url: string;
  /** Event names; whether each is one Tessera sends is checked by the webhooks at start. */
  events: string[];
  /** Its signing secret, `whsec_` and base64, as Standard Webhooks writes them. */
  secret: string;
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
  /**
   * How long a connection to an endpoint is kept idle for its next delivery
   * (WEBHOOK_KEEP_ALIVE_MS); 0: a new connection for every delivery.
   */
  keepAliveMs: number;
  /** How many endpoints (webhooks and audit streams) one team may have (WEBHOOK_ENDPOINTS_PER_TEAM; 0: none). */
  endpointsPerTeam: number;
  /** Whether plain HTTP is accepted for any address (NODE_ENV=development only). */
  plainHttpAnywhere: boolean;
  /**
   * The operator's endpoints for every team's events, registered at start and kept as listed
   * (WEBHOOK_ENDPOINTS, a JSON array); null when the variable is not set, and then the endpoints
   * it listed before are left as they are.
   */
  endpoints: ConfiguredEndpoint[] | null;
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

const ENDPOINT_KEYS = ['url', 'events', 'secret'];
const EXAMPLE =
  '[{"url":"https://hooks.example.com/tessera","events":["token.revoked"],"secret":"whsec_…"}]';

/** One item of WEBHOOK_ENDPOINTS, or what is wrong with it (never quoting its secret). */
function parseEndpoint(item: unknown, at: string): ConfiguredEndpoint | { error: string } {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) {
    return { error: `${at} must be an object with url, events and secret` };
  }
  const fields = item as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((k) => !ENDPOINT_KEYS.includes(k));
  if (unknown.length > 0) {
    return { error: `${at} has ${unknown.join(', ')}: only url, events and secret are read` };
  }
  const { url, events, secret } = fields;
  const parsed = typeof url === 'string' ? URL.parse(url) : null;
  // Measured as kept: letters outside ASCII grow to %XX each.
  if (!parsed || parsed.href.length > 2048 || !['https:', 'http:'].includes(parsed.protocol)) {
    return {
      error: `${at}: url must be an https:// URL (http:// only to WEBHOOK_ALLOWED_RANGES) of at most 2048 characters`,
    };
  }
  if (parsed.username || parsed.password) {
    return { error: `${at}: url must not hold a user name or password` };
  }
  if (
    !Array.isArray(events) ||
    events.length === 0 ||
    !events.every((e) => typeof e === 'string' && /^[a-z_]+\.[a-z_]+$/.test(e))
  ) {
    return {
      error: `${at} (${parsed.href}): events must be a list of event names such as "token.revoked"`,
    };
  }
  const body = typeof secret === 'string' ? /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(secret) : null;
  const bytes = body ? Buffer.from(body[1], 'base64').length : 0;
  if (bytes < 24 || bytes > 64) {
    return {
      error: `${at} (${parsed.href}): secret must be "whsec_" and 24 to 64 bytes in base64 (e.g. "whsec_$(openssl rand -base64 32)")`,
    };
  }
  return { url: parsed.href, events: [...new Set(events as string[])], secret: secret as string };
}

/**
 * WEBHOOK_ENDPOINTS: a JSON array of `{"url", "events", "secret"}`, each URL once. What is
 * wrong is said by the item's place and URL, never by quoting the secret.
 */
export function parseConfiguredEndpoints(
  raw: string,
): ConfiguredEndpoint[] | null | { error: string } {
  if (raw === '') return null;
  let list: unknown;
  try {
    list = JSON.parse(raw);
  } catch {
    return { error: `must be a JSON array such as ${EXAMPLE}` };
  }
  if (!Array.isArray(list)) return { error: `must be a JSON array such as ${EXAMPLE}` };
  const endpoints: ConfiguredEndpoint[] = [];
  for (const [i, item] of list.entries()) {
    const endpoint = parseEndpoint(item, `endpoint ${i + 1}`);
    if ('error' in endpoint) return endpoint;
    if (endpoints.some((e) => e.url === endpoint.url)) {
      return { error: `endpoint ${i + 1} (${endpoint.url}): the URL is listed twice` };
    }
    endpoints.push(endpoint);
  }
  return endpoints;
}

export function readWebhooksConfig(r: EnvReader, nodeEnv: string): WebhooksConfig {
  return {
    allowedRanges: r.read('WEBHOOK_ALLOWED_RANGES', '', parseRanges),
    timeoutMs: r.read('WEBHOOK_TIMEOUT_MS', '10000', integer(100, 60_000)),
    // Below the 5 s of Node's and most servers' keep-alive, so the receiver seldom closes first.
    keepAliveMs: r.read('WEBHOOK_KEEP_ALIVE_MS', '4000', integer(0, 60_000)),
    endpointsPerTeam: r.read('WEBHOOK_ENDPOINTS_PER_TEAM', '20', integer(0, 1_000)),
    plainHttpAnywhere: nodeEnv === 'development',
    // The value holds secrets: a problem names the endpoint, never the value.
    endpoints: r.read('WEBHOOK_ENDPOINTS', '', parseConfiguredEndpoints, () => '(not shown)'),
  };
}
