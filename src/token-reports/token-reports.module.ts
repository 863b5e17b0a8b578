import { Module } from '@nestjs/common';
import type { Config } from '../config/config.js';
import { TokensModule } from '../tokens/tokens.module.js';
import { ReportVerifier } from './report-verifier.js';
import { TokenReportsService } from './token-reports.service.js';

/**
 * Leaked tokens reported by a secret scanner: the signature's check and what a report does. Its
 * address (`POST /security/token-reports`) is the API door's (api/token-reports/).
 */
@Module({
  imports: [TokensModule],
  providers: [ReportVerifier, TokenReportsService],
  exports: [TokenReportsService],
})
export class TokenReportsModule {}

/** Whether reports are taken: only when TOKEN_REPORT_PUBLIC_KEYS names the keys they are signed with. */
export function reportsTaken(config: Config): boolean {
  return config.security.tokenReportKeys.length > 0;
}
