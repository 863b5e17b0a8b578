import { WebhookDeliveryModule } from './webhooks/webhook-delivery.module.js';
import { Module, type DynamicModule, type Type } from '@nestjs/common';
import type { DestinationStream } from 'pino';
import { AccountModule } from './account/account.module.js';
import { InvitationsModule } from './invitations/invitations.module.js';
import { ApiV1Module } from './api/v1/api-v1.module.js';
import type { Clock } from './clock/clock.js';
import type { Config } from './config/config.js';
import { CoreModule } from './core.module.js';
import { HealthModule } from './health/health.module.js';
import { HttpModule } from './http/http.module.js';
import { LoggingModule } from './logging/logging.module.js';
import { MailDeliveryModule } from './mail/mail-delivery.module.js';
import { MaintenanceModule } from './maintenance/maintenance.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { TokenReportsApiModule } from './api/token-reports/token-reports-api.module.js';
import { WebModule } from './web/web.module.js';

export interface AppOptions {
  /** Where log lines go instead of stdout. */
  logDestination?: DestinationStream;
  /** The clock instead of the machine's (tests move it). */
  clock?: Clock;
  /**
   * Feature modules of the deployment's own, beside Tessera's: their `@ApiEndpoint` routes
   * get the API's authentication, limits, usage, audit log and OpenAPI entries
   * (docs/extending.md).
   */
  modules?: Type[];
}

/** The whole HTTP application, built from a configuration validated before boot. */
@Module({})
export class AppModule {
  static forRoot(config: Config, options: AppOptions = {}): DynamicModule {
    return {
      module: AppModule,
      imports: [
        LoggingModule.forRoot(config, options.logDestination),
        HttpModule,
        // First, so Express tries the API's routes before every page's (routes are matched in
        // the order modules register them, one path test each).
        ApiV1Module,
        CoreModule.forRoot(config, options.clock),
        WebModule,
        AccountModule,
        InvitationsModule,
        TokenReportsApiModule.forRoot(config),
        HealthModule,
        MetricsModule.forRoot(config),
        MailDeliveryModule,
        WebhookDeliveryModule,
        MaintenanceModule,
        ...(options.modules ?? []),
      ],
    };
  }
}
