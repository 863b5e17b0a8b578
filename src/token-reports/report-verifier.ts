import { Inject, Injectable } from '@nestjs/common';
import { verify, type KeyObject } from 'node:crypto';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { ReportSignatureError } from './token-reports.errors.js';

/** A report as it came: the body's bytes, and the headers that say who signed them. */
export interface SignedReport {
  body: Buffer;
  /** `Github-Public-Key-Identifier`: which key signed it, in hex. */
  keyId: string | undefined;
  /** `Github-Public-Key-Signature`: an ECDSA P-256 SHA-256 signature of the body, DER in base64. */
  signature: string | undefined;
}

// A DER P-256 signature is at most 72 bytes (96 characters of base64).
const BASE64_SIGNATURE = /^[A-Za-z0-9+/]{1,200}={0,2}$/;

/**
 * Checks a report's signature against TOKEN_REPORT_PUBLIC_KEYS, over the body's bytes as they
 * arrived (GitHub signs the raw body: parsing and writing it again would change it).
 */
@Injectable()
export class ReportVerifier {
  private readonly keys: ReadonlyMap<string, KeyObject>;

  constructor(@Inject(CONFIG) config: Config) {
    this.keys = new Map(config.security.tokenReportKeys.map((k) => [k.id, k.key]));
  }

  /** Returns when one of the configured keys signed the body; throws otherwise. */
  verify(report: SignedReport): void {
    const { keyId, signature } = report;
    if (!keyId || !signature) throw new ReportSignatureError('signature_required');
    const key = this.keys.get(keyId.trim().toLowerCase());
    if (!key) throw new ReportSignatureError('unknown_key');
    if (!BASE64_SIGNATURE.test(signature.trim()) || !signs(key, report.body, signature.trim())) {
      throw new ReportSignatureError('invalid_signature');
    }
  }
}

function signs(key: KeyObject, body: Buffer, signature: string): boolean {
  try {
    return verify('sha256', body, { key, dsaEncoding: 'der' }, Buffer.from(signature, 'base64'));
  } catch {
    // A signature that is not DER at all: OpenSSL refuses to read it.
    return false;
  }
}
