import { describe, expect, it, jest } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { Actors } from '../common/actor.js';
import { ValidationError } from '../common/errors/domain.error.js';
import { LeakedTokens, type ReportedToken } from '../tokens/leaked-tokens.js';
import { ReportVerifier, type SignedReport } from './report-verifier.js';
import { MalformedReportError, ReportSignatureError } from './token-reports.errors.js';
import {
  MAX_REPORTED_TOKENS,
  MAX_TOKEN_LENGTH,
  TokenReportsService,
} from './token-reports.service.js';

async function serviceWith(verify: () => void) {
  const revokeReported = jest.fn(async (_actor: unknown, reports: readonly ReportedToken[]) =>
    reports.map((r) => (r.token.startsWith('tsr_') ? 'true_positive' : 'false_positive')),
  );
  const moduleRef = await Test.createTestingModule({
    providers: [
      TokenReportsService,
      { provide: ReportVerifier, useValue: { verify } },
      { provide: LeakedTokens, useValue: { revokeReported } },
    ],
  }).compile();
  return { service: moduleRef.get(TokenReportsService), revokeReported };
}

const report = (body: unknown): SignedReport => ({
  body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
  keyId: 'ab',
  signature: 'AAAA',
});

const actor = Actors.visitor({ ip: '192.0.2.1', userAgent: 'GitHub-Hookshot' });

describe('TokenReportsService', () => {
  it('should answer one label per reported token, in order, with the token and type as sent', async () => {
    const { service, revokeReported } = await serviceWith(() => undefined);
    const answer = await service.receive(
      actor,
      report([
        {
          token: 'tsr_a',
          type: 'tessera_token',
          url: 'https://github.com/o/r/blob/1/a.env',
          source: 'content',
        },
        { token: 'nope', type: 'tessera_token', url: '', source: 'commit' },
        { token: 'tsr_b', type: 'tessera_token', url: 'javascript:alert(1)' },
        { token: 'tsr_a', type: 'tessera_token' },
      ]),
    );
    expect(answer).toEqual([
      { token_raw: 'tsr_a', token_type: 'tessera_token', label: 'true_positive' },
      { token_raw: 'nope', token_type: 'tessera_token', label: 'false_positive' },
      { token_raw: 'tsr_b', token_type: 'tessera_token', label: 'true_positive' },
      { token_raw: 'tsr_a', token_type: 'tessera_token', label: 'true_positive' },
    ]);
    // Only web addresses are passed on as where a token was found.
    expect(revokeReported).toHaveBeenCalledWith(actor, [
      { token: 'tsr_a', foundAt: 'https://github.com/o/r/blob/1/a.env' },
      { token: 'nope', foundAt: null },
      { token: 'tsr_b', foundAt: null },
      { token: 'tsr_a', foundAt: null },
    ]);
  });

  it('should read nothing and revoke nothing when the signature is refused', async () => {
    const { service, revokeReported } = await serviceWith(() => {
      throw new ReportSignatureError('invalid_signature');
    });
    await expect(service.receive(actor, report('not even json'))).rejects.toThrow(
      ReportSignatureError,
    );
    expect(revokeReported).not.toHaveBeenCalled();
  });

  it('should refuse a body that is not JSON (malformed_report) or not a list of tokens (validation_failed), revoking nothing', async () => {
    const { service, revokeReported } = await serviceWith(() => undefined);
    const refusal = async (body: unknown) => {
      try {
        await service.receive(actor, report(body));
        return 'accepted';
      } catch (error) {
        if (error instanceof MalformedReportError) return error.code;
        if (error instanceof ValidationError)
          return `${error.code} ${Object.keys(error.fields).join()}`;
        throw error;
      }
    };
    expect(await refusal('[{"token": "tsr_')).toBe('malformed_report');
    expect(await refusal('')).toBe('malformed_report');
    expect(await refusal({ token: 'tsr_a' })).toBe('validation_failed report');
    expect(await refusal([{ token: 'tsr_a' }, 'tsr_b'])).toBe('validation_failed [1]');
    expect(await refusal([{ type: 'x' }])).toBe('validation_failed [0].token');
    expect(await refusal([{ token: 42 }])).toBe('validation_failed [0].token');
    expect(await refusal([{ token: 'x'.repeat(MAX_TOKEN_LENGTH + 1) }])).toBe(
      'validation_failed [0].token',
    );
    expect(await refusal([{ token: 'tsr_a', url: 7 }])).toBe('validation_failed [0].url');
    const many = Array.from({ length: MAX_REPORTED_TOKENS + 1 }, () => ({ token: 'tsr_a' }));
    expect(await refusal(many)).toBe('validation_failed report');
    expect(await refusal(many.slice(1))).toBe('accepted');
    expect(revokeReported).toHaveBeenCalledTimes(1);
  });
});
