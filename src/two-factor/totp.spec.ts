import { beforeEach, describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { Secret, TOTP } from 'otpauth';
import { TotpCodes } from './totp.js';

/** RFC 6238's SHA-1 test key ("12345678901234567890"), and its published vector at T = 59 s. */
const RFC_SECRET = new Secret({ buffer: new TextEncoder().encode('12345678901234567890').buffer })
  .base32;

const codeAt = (secret: string, ms: number) =>
  TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: ms });

describe('TotpCodes', () => {
  let totp: TotpCodes;
  // A moment in the middle of a 30-second step.
  const now = Date.UTC(2026, 0, 5, 12, 0, 15);
  const step = Math.floor(now / 30_000);

  beforeEach(async () => {
    const moduleRef = await Test.createTestingModule({ providers: [TotpCodes] }).compile();
    totp = moduleRef.get(TotpCodes);
  });

  it('should accept the RFC 6238 test vector when checked at its time', () => {
    // RFC 6238 appendix B: 94287082 in 8 digits; the 6-digit code is its last six.
    expect(totp.check(RFC_SECRET, '287082', null, 59_000)).toEqual({ ok: true, step: 1 });
  });

  it('should make a 160-bit base32 secret and an otpauth address apps read', () => {
    const secret = totp.newSecret();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const uri = new URL(totp.uri(secret, 'ada@example.com'));
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    expect(Object.fromEntries(uri.searchParams)).toEqual({
      issuer: 'Tessera',
      secret,
      algorithm: 'SHA1',
      digits: '6',
      period: '30',
    });
  });

  it('should accept the current code and the ones a step either side, naming their step', () => {
    const secret = totp.newSecret();
    expect(totp.check(secret, codeAt(secret, now), null, now)).toEqual({ ok: true, step });
    expect(totp.check(secret, codeAt(secret, now - 30_000), null, now)).toEqual({
      ok: true,
      step: step - 1,
    });
    expect(totp.check(secret, codeAt(secret, now + 30_000), null, now)).toEqual({
      ok: true,
      step: step + 1,
    });
  });

  it('should accept a code typed with spaces when it is otherwise right', () => {
    const secret = totp.newSecret();
    const code = codeAt(secret, now);
    expect(totp.check(secret, ` ${code.slice(0, 3)} ${code.slice(3)} `, null, now).ok).toBe(true);
  });

  it('should refuse a code two steps old exactly as a code from another secret, as wrong', () => {
    const secret = totp.newSecret();
    for (const stepsOff of [-10, -2, 2, 10]) {
      expect(totp.check(secret, codeAt(secret, now + stepsOff * 30_000), null, now)).toEqual({
        ok: false,
        reason: 'wrong',
      });
    }
    const other = totp.newSecret();
    const foreign = codeAt(other, now);
    // One in a million, the other secret's code is this one's too: then try the next step's.
    const wrong = foreign === codeAt(secret, now) ? codeAt(other, now + 30_000) : foreign;
    expect(totp.check(secret, wrong, null, now)).toEqual({ ok: false, reason: 'wrong' });
  });

  it('should refuse the step accepted last time, and any earlier one, as reused', () => {
    const secret = totp.newSecret();
    const code = codeAt(secret, now);
    expect(totp.check(secret, code, step, now)).toEqual({ ok: false, reason: 'reused' });
    expect(totp.check(secret, codeAt(secret, now - 30_000), step, now)).toEqual({
      ok: false,
      reason: 'reused',
    });
    expect(totp.check(secret, codeAt(secret, now + 30_000), step, now)).toEqual({
      ok: true,
      step: step + 1,
    });
  });

  it.each(['', '12345', '1234567', 'abcdef', '12345６', '１２３４５６', '12-3456'])(
    'should refuse %j as malformed without computing anything',
    (code) => {
      expect(totp.check(totp.newSecret(), code, null, now)).toEqual({
        ok: false,
        reason: 'malformed',
      });
    },
  );
});
