import { Module, type DynamicModule } from '@nestjs/common';
import { ApiV1Module } from './api/v1/api-v1.module.js';
import type { Config } from './config/config.js';
import { CoreModule } from './core.module.js';
import { HealthModule } from './health/health.module.js';

/** The whole HTTP application, built from a configuration validated before boot. */
@Module({})
export class AppModule {
  static forRoot(config: Config): DynamicModule {
    return { module: AppModule, imports: [CoreModule.forRoot(config), ApiV1Module, HealthModule] };
  }
}
