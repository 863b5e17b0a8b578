import { describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { generateKeyPairSync, sign } from 'node:crypto';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { parseTokenReportKeys, type TokenReportKey } from '../config/token-report-keys.js';
import { ReportVerifier, type SignedReport } from './report-verifier.js';
import { ReportSignatureError } from './token-reports.errors.js';

/** The signed request GitHub's documentation shows, and the key it names (published by GitHub). */
const GITHUB_SAMPLE = {
  keyId: 'bcb53661c06b4728e59d897fb6165d5c9cda0fd9cdf9d09ead458168deb7518c',
  key: '-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEYAGMWO8XgCamYKMJS6jc/qgvSlAd\nAjPuDPRcXU22YxgBrz+zoN19MzuRyW87qEt9/AmtoNP5GrobzUvQSyJFVw==\n-----END PUBLIC KEY-----\n',
  body: '[{"source":"commit","token":"some_token","type":"some_type","url":"https://example.com/base-repo-url/"}]',
  signature:
    'MEQCIQDaMKqrGnE27S0kgMrEK0eYBmyG0LeZismAEz/BgZyt7AIfXt9fErtRS4XaeSt/AO1RtBY66YcAdjxji410VQV4xg==',
};

async function verifierWith(pems: string): Promise<ReportVerifier> {
  const keys = parseTokenReportKeys(pems) as TokenReportKey[];
  const moduleRef = await Test.createTestingModule({
    providers: [
      ReportVerifier,
      { provide: CONFIG, useValue: { security: { tokenReportKeys: keys } } as Config },
    ],
  }).compile();
  return moduleRef.get(ReportVerifier);
}

const sample = (changes: Partial<SignedReport> = {}): SignedReport => ({
  body: Buffer.from(GITHUB_SAMPLE.body),
  keyId: GITHUB_SAMPLE.keyId,
  signature: GITHUB_SAMPLE.signature,
  ...changes,
});

function refusal(verifier: ReportVerifier, report: SignedReport): string | undefined {
  try {
    verifier.verify(report);
    return undefined;
  } catch (error) {
    if (!(error instanceof ReportSignatureError)) throw error;
    return error.code;
  }
}

describe('ReportVerifier', () => {
  it("should accept the signed sample request of GitHub's documentation under its published key", async () => {
    const verifier = await verifierWith(GITHUB_SAMPLE.key);
    expect(refusal(verifier, sample())).toBeUndefined();
    // The identifier as a header may carry it: in capitals, with spaces around.
    expect(
      refusal(verifier, sample({ keyId: ` ${GITHUB_SAMPLE.keyId.toUpperCase()} ` })),
    ).toBeUndefined();
  });

  it('should refuse the sample when one byte of the body changed, even only its spacing', async () => {
    const verifier = await verifierWith(GITHUB_SAMPLE.key);
    const spaced = Buffer.from(GITHUB_SAMPLE.body.replace('","', '", "'));
    expect(refusal(verifier, sample({ body: spaced }))).toBe('invalid_signature');
    expect(refusal(verifier, sample({ body: Buffer.from(`${GITHUB_SAMPLE.body}\n`) }))).toBe(
      'invalid_signature',
    );
  });

  it('should refuse a missing header, a key not configured, and a signature that is not one', async () => {
    const verifier = await verifierWith(GITHUB_SAMPLE.key);
    expect(refusal(verifier, sample({ keyId: undefined }))).toBe('signature_required');
    expect(refusal(verifier, sample({ signature: '' }))).toBe('signature_required');
    expect(refusal(verifier, sample({ keyId: '90a421169f0a' }))).toBe('unknown_key');
    for (const signature of [
      'not base64!',
      'AAAA',
      'A'.repeat(400),
      GITHUB_SAMPLE.signature.slice(8),
    ]) {
      expect(refusal(verifier, sample({ signature }))).toBe('invalid_signature');
    }
  });

  it('should accept a body signed by any configured key, and refuse one signed by another key', async () => {
    const ours = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const theirs = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const pem = ours.publicKey.export({ type: 'spki', format: 'pem' }) as string;
    const verifier = await verifierWith(`${GITHUB_SAMPLE.key}${pem}`);
    const [, ourKey] = parseTokenReportKeys(`${GITHUB_SAMPLE.key}${pem}`) as TokenReportKey[];
    const body = Buffer.from('[]');
    const signed = (key: typeof ours.privateKey) => sign('sha256', body, key).toString('base64');
    expect(
      refusal(verifier, { body, keyId: ourKey.id, signature: signed(ours.privateKey) }),
    ).toBeUndefined();
    expect(
      refusal(verifier, { body, keyId: ourKey.id, signature: signed(theirs.privateKey) }),
    ).toBe('invalid_signature');
    // Signed with our key but naming GitHub's: the key named is the one checked.
    expect(
      refusal(verifier, { body, keyId: GITHUB_SAMPLE.keyId, signature: signed(ours.privateKey) }),
    ).toBe('invalid_signature');
  });
});
