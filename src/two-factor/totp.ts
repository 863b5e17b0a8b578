import { Injectable } from '@nestjs/common';
import { Secret, TOTP } from 'otpauth';

/** RFC 6238's defaults, which every authenticator app reads: HMAC-SHA-1, 6 digits, 30 s. */
const ALGORITHM = 'SHA1';
const DIGITS = 6;
const PERIOD_SECONDS = 30;
/** One step either side: a phone's clock a little off, or a code typed as it changed. */
const WINDOW = 1;
/** 160 bits, the HMAC-SHA-1 key length RFC 4226 recommends. */
const SECRET_BYTES = 20;

export type TotpCheck =
  { ok: true; step: number } | { ok: false; reason: 'malformed' | 'wrong' | 'reused' };

/**
 * Time-based one-time codes (RFC 6238) through `otpauth`. A code names a time step; a step
 * accepted once is never accepted again for the same person, so a code seen over a shoulder or
 * replayed within its 90 seconds is refused.
 */
@Injectable()
export class TotpCodes {
  /** A new random secret, in base32 as people type it and apps read it. */
  newSecret(): string {
    return new Secret({ size: SECRET_BYTES }).base32;
  }

  /** The `otpauth://` address an app scans from the QR code. */
  uri(secret: string, account: string, issuer = 'Tessera'): string {
    return this.totp(secret, account, issuer).toString();
  }

  /**
   * Checks `code` against `secret` at `nowMs`. `lastUsedStep` is the step accepted last time,
   * if any: that step and older ones are refused as reused.
   */
  check(secret: string, code: string, lastUsedStep: number | null, nowMs: number): TotpCheck {
    const token = code.replace(/\s+/g, '');
    if (!new RegExp(`^\\d{${DIGITS}}$`).test(token)) return { ok: false, reason: 'malformed' };
    const totp = this.totp(secret);
    const delta = totp.validate({ token, timestamp: nowMs, window: WINDOW });
    // A code a few steps off is as wrong as any other: telling it apart ("expired") would tell a
    // guesser which of their guesses came close.
    if (delta === null) return { ok: false, reason: 'wrong' };
    const step = TOTP.counter({ period: PERIOD_SECONDS, timestamp: nowMs }) + delta;
    if (lastUsedStep !== null && step <= lastUsedStep) return { ok: false, reason: 'reused' };
    return { ok: true, step };
  }

  private totp(secret: string, label = 'Tessera', issuer = 'Tessera'): TOTP {
    return new TOTP({
      issuer,
      label,
      secret: Secret.fromBase32(secret),
      algorithm: ALGORITHM,
      digits: DIGITS,
      period: PERIOD_SECONDS,
    });
  }
}
