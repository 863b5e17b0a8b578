import { describe, expect, it } from '@jest/globals';
import { clientKeyOf } from './client-address.js';

describe('clientKeyOf', () => {
  it('should keep an IPv4 address as it is, mapped into IPv6 or not', () => {
    expect(clientKeyOf('203.0.113.7')).toBe('203.0.113.7');
    expect(clientKeyOf('::ffff:203.0.113.7')).toBe('203.0.113.7');
  });

  it('should give every address of one IPv6 /64 the same key when written in any form', () => {
    const key = clientKeyOf('2001:db8:1:2::1');
    expect(key).toBe('2001:db8:1:2::/64');
    expect(clientKeyOf('2001:0db8:0001:0002:ffff:ffff:ffff:fffe')).toBe(key);
    expect(clientKeyOf('2001:DB8:1:2:abcd::')).toBe(key);
  });

  it('should tell neighbouring IPv6 /64s apart', () => {
    expect(clientKeyOf('2001:db8:1:3::1')).not.toBe(clientKeyOf('2001:db8:1:2::1'));
    expect(clientKeyOf('::1')).toBe('0:0:0:0::/64');
  });

  it('should not use anything that is not an address as a key when given one', () => {
    expect(clientKeyOf(undefined)).toBe('unknown');
    expect(clientKeyOf('x'.repeat(10_000))).toBe('unknown');
  });
});
