import { Injectable } from '@nestjs/common';
import type { Actor } from '../common/actor.js';
import { ValidationError } from '../common/errors/domain.error.js';
import { LeakedTokens, type ReportLabel } from '../tokens/leaked-tokens.js';
import { ReportVerifier, type SignedReport } from './report-verifier.js';
import { MalformedReportError } from './token-reports.errors.js';

/** Tokens one report may name: a burst of leaks is sent as several reports. */
export const MAX_REPORTED_TOKENS = 100;
/** Far longer than a token (40 characters): anything longer is not a report of ours. */
export const MAX_TOKEN_LENGTH = 1000;
const MAX_TEXT_LENGTH = 2000;

/** One match as GitHub's secret scanning sends it. */
export interface ReportedMatch {
  token: string;
  type: string;
  /** Where it was found; GitHub may send it empty. */
  url: string;
}

/** GitHub's feedback format: the token as it was sent, and whether it is a real one. */
export interface TokenReportLabel {
  token_raw: string;
  token_type: string;
  label: ReportLabel;
}

/**
 * Reports of tokens found in public, in the format of GitHub's secret scanning partner
 * program: verified first, read only then, and answered with one label per token, in the
 * report's order, saying nothing else (not whose it was, nor whether it was already revoked).
 */
@Injectable()
export class TokenReportsService {
  constructor(
    private readonly verifier: ReportVerifier,
    private readonly leaked: LeakedTokens,
  ) {}

  async receive(actor: Actor, report: SignedReport): Promise<TokenReportLabel[]> {
    this.verifier.verify(report);
    const matches = readReport(report.body);
    const labels = await this.leaked.revokeReported(
      actor,
      matches.map((m) => ({ token: m.token, foundAt: publicAddress(m.url) })),
    );
    return matches.map((m, i) => ({ token_raw: m.token, token_type: m.type, label: labels[i] }));
  }
}

/** The matches of a signed body: a JSON array of `{token, type, url, source}`. */
export function readReport(body: Buffer): ReportedMatch[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new MalformedReportError();
  }
  if (!Array.isArray(parsed)) {
    throw new ValidationError({ report: 'A report is a JSON array of the tokens found.' });
  }
  if (parsed.length > MAX_REPORTED_TOKENS) {
    throw new ValidationError({
      report: `A report names at most ${MAX_REPORTED_TOKENS} tokens; send the rest in another.`,
    });
  }
  return parsed.map((entry: unknown, i) => readMatch(entry, `[${i}]`));
}

function readMatch(entry: unknown, at: string): ReportedMatch {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    throw new ValidationError({ [at]: 'Each token found is an object.' });
  }
  const { token, type = '', url = '', source = '' } = entry as Record<string, unknown>;
  if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH) {
    throw new ValidationError({
      [`${at}.token`]: `The token is a string of at most ${MAX_TOKEN_LENGTH} characters.`,
    });
  }
  for (const [name, value] of Object.entries({ type, url, source })) {
    if (typeof value !== 'string' || value.length > MAX_TEXT_LENGTH) {
      throw new ValidationError({
        [`${at}.${name}`]: `When given, ${name} is a string of at most ${MAX_TEXT_LENGTH} characters.`,
      });
    }
  }
  return { token, type: type as string, url: url as string };
}

/** The address where a token was found, when it is a web address to tell its person; else null. */
function publicAddress(url: string): string | null {
  if (!URL.canParse(url)) return null;
  const { protocol } = new URL(url);
  return protocol === 'https:' || protocol === 'http:' ? url : null;
}
