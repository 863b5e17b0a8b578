import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import type { SignedReport } from '../../token-reports/report-verifier.js';

/**
 * The report as it was sent: the body's bytes (kept raw by the module's parser) and the
 * signature headers. Not validated here: the service verifies the signature over those bytes
 * before it reads anything in them, then checks what it reads.
 */
export const ReportAsSent = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): SignedReport => {
    const req = ctx.switchToHttp().getRequest<Request>();
    return {
      body: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0),
      keyId: req.get('github-public-key-identifier'),
      signature: req.get('github-public-key-signature'),
    };
  },
);
