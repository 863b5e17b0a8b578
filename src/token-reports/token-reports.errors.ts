import { DomainError } from '../common/errors/domain.error.js';

const SIGNATURE_REFUSALS = {
  signature_required:
    'A token report carries the Github-Public-Key-Identifier and Github-Public-Key-Signature headers.',
  unknown_key: 'The key Github-Public-Key-Identifier names is not one this server trusts.',
  invalid_signature: 'The signature does not match the body under that key.',
} as const;

export type SignatureRefusal = keyof typeof SIGNATURE_REFUSALS;

/**
 * A report that is not signed by a configured key: 401, whether the headers are missing, name
 * a key not configured (a rotation the operator has not followed yet) or do not match.
 */
export class ReportSignatureError extends DomainError {
  constructor(readonly code: SignatureRefusal) {
    super(SIGNATURE_REFUSALS[code]);
  }
}

/** A signed body that is not JSON. */
export class MalformedReportError extends DomainError {
  readonly code = 'malformed_report';
  constructor() {
    super('The report is not valid JSON.');
  }
}
