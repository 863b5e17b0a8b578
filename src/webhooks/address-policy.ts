import { Inject, Injectable } from '@nestjs/common';
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';

/**
 * Addresses a webhook is never sent to unless WEBHOOK_ALLOWED_RANGES allows them: this host,
 * private networks, link-local (cloud metadata at 169.254.169.254 and fd00:ec2::254), shared,
 * reserved, documentation, multicast and broadcast ranges, and IPv6 forms that carry an IPv4
 * address (IPv4-compatible, IPv4-translated, 6to4, Teredo).
 */
const REFUSED: [string, number, 'ipv4' | 'ipv6'][] = [
  ['0.0.0.0', 8, 'ipv4'],
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['127.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'],
  ['192.0.2.0', 24, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'],
  ['198.51.100.0', 24, 'ipv4'],
  ['203.0.113.0', 24, 'ipv4'],
  ['224.0.0.0', 4, 'ipv4'],
  ['240.0.0.0', 4, 'ipv4'],
  // IPv4-compatible (deprecated: `::7f00:1` is 127.0.0.1), the unspecified address and ::1.
  ['::', 96, 'ipv6'],
  // IPv4-translated (RFC 2765): `::ffff:0:7f00:1` stands for 127.0.0.1.
  ['::ffff:0:0:0', 96, 'ipv6'],
  ['64:ff9b::', 96, 'ipv6'],
  ['64:ff9b:1::', 48, 'ipv6'],
  ['100::', 64, 'ipv6'],
  // Teredo and 6to4 carry an IPv4 address inside, reached through a relay.
  ['2001::', 32, 'ipv6'],
  ['2001:db8::', 32, 'ipv6'],
  ['2002::', 16, 'ipv6'],
  ['3fff::', 20, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
  // Site-local (deprecated, private in effect).
  ['fec0::', 10, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
];

/** Why a URL or an address was refused, in words an owner can act on. */
export class RefusedAddressError extends Error {}

/**
 * What is wrong with a webhook URL's form, as "The URL …" ends (no address is looked up); null
 * when nothing is. Forms check it with their other fields, so that every mistake is said at once.
 */
export function urlFormProblem(raw: string): string | null {
  const checked = checkedUrl(raw);
  return typeof checked === 'string' ? checked : null;
}

/** The URL parsed once, or what is wrong with its form. */
function checkedUrl(raw: string): URL | string {
  const url = URL.parse(raw);
  if (!url) return 'is not a URL';
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must start with https://';
  if (url.username || url.password) return 'must not carry a user name or password';
  // Nothing listens on port 0: every delivery would fail.
  if (url.port === '0') return 'must not name port 0';
  return url;
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Turns a host name into addresses: the system's resolver (a spec may stand in for it). */
@Injectable()
export class WebhookResolver {
  async resolve(host: string): Promise<ResolvedAddress[]> {
    const found = await lookup(host, { all: true, verbatim: true });
    return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
  }
}

/**
 * Decides where webhooks may go, at registration and again at every send, after resolving
 * the name: the address a delivery connects to is one this policy accepted, so a name that
 * resolves elsewhere a moment later (DNS rebinding) changes nothing.
 */
@Injectable()
export class AddressPolicy {
  private readonly refused = new BlockList();
  private readonly allowed = new BlockList();

  constructor(
    @Inject(CONFIG) private readonly config: Config,
    private readonly resolver: WebhookResolver,
  ) {
    for (const [network, prefix, family] of REFUSED)
      this.refused.addSubnet(network, prefix, family);
    for (const r of config.webhooks.allowedRanges)
      this.allowed.addSubnet(r.network, r.prefix, r.family);
  }

  /** Parses and checks a URL's form (scheme, no credentials): the address is checked apart. */
  parse(raw: string): URL {
    const checked = checkedUrl(raw);
    if (typeof checked === 'string') throw new RefusedAddressError(checked);
    return checked;
  }

  /**
   * The address to connect to for `url`: each of the name's addresses is checked, and the first
   * acceptable one is used. Refused when none is, or when plain HTTP is asked for an address
   * outside WEBHOOK_ALLOWED_RANGES (outside development).
   */
  async addressFor(url: URL): Promise<ResolvedAddress> {
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const literal = isIP(host);
    let candidates: ResolvedAddress[];
    if (literal) {
      candidates = [{ address: host, family: literal === 6 ? 6 : 4 }];
    } else {
      try {
        candidates = await this.resolver.resolve(host);
      } catch {
        throw new RefusedAddressError(`names a host that does not resolve (${host})`);
      }
    }
    const accepted = candidates.map(unmapped).filter((a) => this.accepts(a));
    if (accepted.length === 0) {
      const shown = candidates.map((a) => a.address).join(', ') || 'nothing';
      throw new RefusedAddressError(
        `resolves to ${shown}: a loopback, private, link-local or reserved address`,
      );
    }
    const target = accepted[0];
    if (url.protocol === 'http:' && !this.config.webhooks.plainHttpAnywhere) {
      if (!this.inAllowedRange(target)) throw new RefusedAddressError('must start with https://');
    }
    return target;
  }

  private accepts(a: ResolvedAddress): boolean {
    return this.inAllowedRange(a) || !this.refused.check(a.address, familyName(a));
  }

  private inAllowedRange(a: ResolvedAddress): boolean {
    return this.allowed.check(a.address, familyName(a));
  }
}

const familyName = (a: ResolvedAddress): 'ipv4' | 'ipv6' => (a.family === 6 ? 'ipv6' : 'ipv4');

/**
 * An IPv4 address written as IPv6 (::ffff:10.0.0.1, ::ffff:a00:1) is judged, and reached, as
 * IPv4. (Node's BlockList would match every IPv4 address against an IPv6 rule for the mapped
 * range, so the range is not listed but unwrapped here.)
 */
function unmapped(a: ResolvedAddress): ResolvedAddress {
  if (a.family !== 6) return a;
  const parsed = ipaddr.IPv6.parse(a.address);
  return parsed.isIPv4MappedAddress()
    ? { address: parsed.toIPv4Address().toString(), family: 4 }
    : a;
}
