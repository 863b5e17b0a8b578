import { describe, expect, it } from '@jest/globals';
import { trustsEveryAddress } from './trusted-ranges.js';

describe('trustsEveryAddress', () => {
  it('should find every IPv4 address trusted by halves, quarters or netmasks that add up', () => {
    expect(trustsEveryAddress(['0.0.0.0/1', '128.0.0.0/1'])).toBe('IPv4');
    expect(
      trustsEveryAddress(['0.0.0.0/2', '64.0.0.0/2', '128.0.0.0/192.0.0.0', '192.0.0.0/2']),
    ).toBe('IPv4');
  });

  it('should find every address trusted through IPv6 ranges, IPv4 included as it is mapped', () => {
    expect(trustsEveryAddress(['::/1', '8000::/1'])).toBe('IPv4');
    expect(trustsEveryAddress(['::ffff:0:0/96'])).toBe('IPv4');
  });

  it('should find every IPv6 address trusted, even with the IPv4 ones left out', () => {
    // Every IPv6 address but the IPv4-mapped ones (::ffff:0:0/96): the sibling of each of the
    // block's enclosing prefixes, /1 to /96.
    const mapped = 0xffff_0000_0000n;
    const v6 = (n: bigint) =>
      Array.from({ length: 8 }, (_, i) =>
        ((n >> BigInt(112 - 16 * i)) & 0xffffn).toString(16),
      ).join(':');
    const allButMapped = Array.from({ length: 96 }, (_, i) => {
      const shift = BigInt(127 - i);
      return `${v6(((mapped >> shift) ^ 1n) << shift)}/${i + 1}`;
    });
    expect(trustsEveryAddress(allButMapped)).toBe('IPv6');
    expect(trustsEveryAddress(allButMapped.slice(1))).toBeNull();
    expect(trustsEveryAddress([...allButMapped, '0.0.0.0/1', '128.0.0.0/1'])).toBe('IPv4');
  });

  it('should accept the usual proxy lists, with a gap anywhere', () => {
    expect(trustsEveryAddress(['loopback', 'uniquelocal', 'linklocal'])).toBeNull();
    expect(trustsEveryAddress(['10.0.0.1', '2001:db8::/32'])).toBeNull();
    expect(
      trustsEveryAddress(['0.0.0.0/1', '128.0.0.0/2', '192.0.0.0/3', '224.0.0.0/4']),
    ).toBeNull();
    expect(trustsEveryAddress(['2000::/3', '4000::/2', '8000::/1'])).toBeNull();
  });
});
