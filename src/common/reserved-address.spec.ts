import { describe, expect, it } from '@jest/globals';
import { isReservedAddress } from './reserved-address.js';

describe('isReservedAddress', () => {
  it('should reserve every address under .invalid, whatever its case, and nothing else', () => {
    expect(isReservedAddress('deploy-bot-7@team-3.service-accounts.invalid')).toBe(true);
    expect(isReservedAddress('someone@INVALID')).toBe(true);
    expect(isReservedAddress('someone@Example.Invalid ')).toBe(true);
    expect(isReservedAddress('someone@example.com')).toBe(false);
    expect(isReservedAddress('someone@invalid.example.com')).toBe(false);
    expect(isReservedAddress('someone@notinvalid')).toBe(false);
  });
});
