import { Controller, HttpCode, Post } from '@nestjs/common';
import { CurrentActor } from '../../http/access.js';
import type { Actor } from '../../common/actor.js';
import { Public } from '../../common/auth-policy.decorator.js';
import { RouteLimit } from '../../http/route-limit.js';
import type { SignedReport } from '../../token-reports/report-verifier.js';
import { ReportAsSent } from './signed-report.decorator.js';
import {
  TokenReportsService,
  type TokenReportLabel,
} from '../../token-reports/token-reports.service.js';

/**
 * Where a secret scanner (GitHub's partner program) reports tokens it found in public. Public
 * to Tessera's own authentication: the scanner's signature is checked instead.
 */
@Controller('security/token-reports')
export class TokenReportsController {
  constructor(private readonly reports: TokenReportsService) {}

  @Post()
  @Public()
  @RouteLimit('token-reports')
  @HttpCode(200)
  receive(
    @CurrentActor() actor: Actor,
    @ReportAsSent() report: SignedReport,
  ): Promise<TokenReportLabel[]> {
    return this.reports.receive(actor, report);
  }
}
