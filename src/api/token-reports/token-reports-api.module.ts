import {
  Inject,
  Module,
  type DynamicModule,
  type MiddlewareConsumer,
  type NestModule,
} from '@nestjs/common';
import { raw } from 'express';
import type { Config } from '../../config/config.js';
import { CONFIG } from '../../config/config.module.js';
import { RateLimitModule } from '../../rate-limit/rate-limit.module.js';
import { reportsTaken, TokenReportsModule } from '../../token-reports/token-reports.module.js';
import { TokenReportsController } from './token-reports.controller.js';

/** A report is JSON of a few hundred bytes a token: a larger body is refused unread (413). */
const REPORT_BODY_LIMIT = '64kb';

/**
 * Where a secret scanner posts the tokens it found (`POST /security/token-reports`: outside
 * /api, with no session, no CSRF token and a JSON answer), only when TOKEN_REPORT_PUBLIC_KEYS
 * names the keys reports are signed with: otherwise nothing is registered, and the path is a
 * 404 like any other.
 */
@Module({})
export class TokenReportsApiModule implements NestModule {
  constructor(@Inject(CONFIG) private readonly config: Config) {}

  static forRoot(config: Config): DynamicModule {
    if (!reportsTaken(config)) return { module: TokenReportsApiModule };
    return {
      module: TokenReportsApiModule,
      imports: [TokenReportsModule, RateLimitModule],
      controllers: [TokenReportsController],
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
