import ipaddr from 'ipaddr.js';

/** proxy-addr's names for address ranges. */
const NAMED: Record<string, string[]> = {
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  loopback: ['127.0.0.1/8', '::1/128'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

const V6_BITS = 128n;
/** IPv4 addresses as proxy-addr matches them against IPv6 ranges: mapped into ::ffff:0:0/96. */
const MAPPED = 0xffff_0000_0000n;
const V4_SPACE: Range = [MAPPED, MAPPED + 0xffff_ffffn];
/** Every IPv6 address that is not an IPv4 one, in two parts. */
const V6_SPACES: Range[] = [
  [0n, MAPPED - 1n],
  [MAPPED + 0x1_0000_0000n, (1n << V6_BITS) - 1n],
];

type Range = [start: bigint, end: bigint];

/**
 * Which family's every address a TRUST_PROXY list trusts, if any: `IPv4` when its ranges
 * together cover every IPv4 address (0.0.0.0/1 and 128.0.0.0/1, say), `IPv6` likewise, else
 * null. A proxy list that trusts every address lets any client choose its own address through
 * X-Forwarded-For. Ranges are read as proxy-addr reads them: names, single addresses, CIDR, and
 * IPv4 netmasks; an IPv4 range also matches IPv4-mapped IPv6 addresses, and an IPv6 range IPv4
 * ones, so both live in one 128-bit space.
 */
export function trustsEveryAddress(list: string[]): 'IPv4' | 'IPv6' | null {
  const ranges = list.flatMap((entry) => NAMED[entry] ?? [entry]).map(rangeOf);
  if (covers(ranges, V4_SPACE)) return 'IPv4';
  if (V6_SPACES.every((space) => covers(ranges, space))) return 'IPv6';
  return null;
}

function rangeOf(entry: string): Range {
  const slash = entry.lastIndexOf('/');
  const address = ipaddr.parse(slash === -1 ? entry : entry.slice(0, slash));
  const v4 = address.kind() === 'ipv4';
  const bits = v4 ? 32 : 128;
  const mask = slash === -1 ? String(bits) : entry.slice(slash + 1);
  const prefix = /^\d+$/.test(mask)
    ? Number(mask)
    : (ipaddr.IPv4.parse(mask).prefixLengthFromSubnetMask() ?? bits);
  let value = 0n;
  for (const byte of address.toByteArray()) value = (value << 8n) | BigInt(byte);
  if (v4) value += MAPPED;
  const size = 1n << BigInt(bits - prefix);
  const start = value - (value % size);
  return [start, start + size - 1n];
}

function covers(ranges: Range[], [from, to]: Range): boolean {
  let next = from;
  for (const [start, end] of [...ranges].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    if (start > next) break;
    if (end >= next) next = end + 1n;
    if (next > to) return true;
  }
  return false;
}
