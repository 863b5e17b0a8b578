import {
  Inject,
  Module,
  type DynamicModule,
  type MiddlewareConsumer,
  type NestModule,
} from '@nestjs/common';
import { raw } from 'express';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { TokensModule } from '../tokens/tokens.module.js';
import { ReportVerifier } from './report-verifier.js';
import { TokenReportsController } from './token-reports.controller.js';
import { TokenReportsService } from './token-reports.service.js';

/**
 * Where reports arrive (outside /api, with no session, no CSRF token and a JSON answer), in
 * every spelling Express routes to it: any case, a trailing slash.
 */
export function isTokenReportsPath(path: string): boolean {
  return /^\/security\/token-reports\/?$/i.test(path);
}

/** A report is JSON of a few hundred bytes a token: a larger body is refused unread (413). */
const REPORT_BODY_LIMIT = '64kb';

/**
 * Leaked tokens reported by a secret scanner (`POST /security/token-reports`), only when
 * TOKEN_REPORT_PUBLIC_KEYS names the keys reports are signed with: otherwise nothing is
 * registered, and the path is a 404 like any other.
 */
@Module({})
export class TokenReportsModule implements NestModule {
  constructor(@Inject(CONFIG) private readonly config: Config) {}

  static forRoot(config: Config): DynamicModule {
    if (!reportsTaken(config)) return { module: TokenReportsModule };
    return {
      module: TokenReportsModule,
      imports: [TokensModule, RateLimitModule],
      controllers: [TokenReportsController],
      providers: [ReportVerifier, TokenReportsService],
    };
  }

  /**
   * The body as bytes, whatever its type, since the signature is over exactly those; encoded
   * bodies (gzip) are refused (415): the signature is over what was sent.
   */
  configure(consumer: MiddlewareConsumer): void {
    if (!reportsTaken(this.config)) return;
    consumer
      .apply(raw({ type: () => true, limit: REPORT_BODY_LIMIT, inflate: false }))
      .forRoutes(TokenReportsController);
  }
}

export function reportsTaken(config: Config): boolean {
  return config.security.tokenReportKeys.length > 0;
}
