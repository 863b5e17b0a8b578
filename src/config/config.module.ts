import { Global, Module, type DynamicModule } from '@nestjs/common';
import { AbilityCatalog } from './abilities.config.js';
import type { Config } from './config.js';

export const CONFIG = Symbol('CONFIG');

/**
 * Makes the validated configuration injectable as `@Inject(CONFIG) config: Config`, and its
 * ability catalog as `AbilityCatalog`.
 */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: Config): DynamicModule {
    return {
      module: ConfigModule,
      providers: [
        { provide: CONFIG, useValue: config },
        { provide: AbilityCatalog, useValue: config.abilities },
      ],
      exports: [CONFIG, AbilityCatalog],
    };
  }
}
