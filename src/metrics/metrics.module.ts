import { Global, Module, type DynamicModule } from '@nestjs/common';
import type { Config } from '../config/config.js';
import { MetricsController } from './metrics.controller.js';
import { Metrics } from './metrics.js';
import { MetricsServer } from './metrics-server.js';

/**
 * Prometheus metrics, only when METRICS_ENABLED: on a port of their own (METRICS_PORT) or on
 * the main port at /metrics behind METRICS_TOKEN. Disabled, nothing is registered or measured.
 */
@Global()
@Module({})
export class MetricsModule {
  static forRoot(config: Config): DynamicModule {
    const { enabled, port } = config.observability.metrics;
    if (!enabled) return { module: MetricsModule };
    return {
      module: MetricsModule,
      controllers: port === null ? [MetricsController] : [],
      providers: [Metrics, ...(port === null ? [] : [MetricsServer])],
      exports: [Metrics],
    };
  }
}
