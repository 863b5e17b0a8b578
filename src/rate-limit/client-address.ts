import { isIPv4, isIPv6 } from 'node:net';

/**
 * The part of a client's address that names one client for a limit: an IPv4 address as it is,
 * an IPv6 address by its /64 (one subscriber usually holds a whole /64, and could otherwise rotate
 * through 2^64 addresses to escape every per-IP limit).
 */
export function clientKeyOf(ip: string | undefined): string {
  if (!ip) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1];
  if (isIPv4(ip)) return ip;
  if (!isIPv6(ip)) return 'unknown';
  return `${expandIPv6(ip).slice(0, 4).join(':')}::/64`;
}

/** The eight groups of an IPv6 address, `::` filled in and leading zeros dropped. */
function expandIPv6(ip: string): string[] {
  const [head, tail = ''] = ip.split('%')[0].toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = ip.includes('::') && tail ? tail.split(':') : [];
  const groups = ip.includes('::')
    ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return groups.map((g) => (parseInt(g, 16) || 0).toString(16));
}
