import { Global, Module, type DynamicModule } from '@nestjs/common';
import type { Config } from './config.js';

export const CONFIG = Symbol('CONFIG');

/** Makes the validated configuration injectable as `@Inject(CONFIG) config: Config`. */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: Config): DynamicModule {
    return {
      module: ConfigModule,
      providers: [{ provide: CONFIG, useValue: config }],
      exports: [CONFIG],
    };
  }
}
