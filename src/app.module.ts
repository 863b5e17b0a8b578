import { Module, type DynamicModule } from '@nestjs/common';
import { ApiV1Module } from './api/v1/api-v1.module.js';
import { AuthModule } from './auth/auth.module.js';
import type { Config } from './config/config.js';
import { ConfigModule } from './config/config.module.js';
import { DatabaseModule } from './database/database.module.js';
import { TeamsModule } from './teams/teams.module.js';
import { TokensModule } from './tokens/tokens.module.js';
import { UsersModule } from './users/users.module.js';

/** The whole application, built from a configuration validated before boot. */
@Module({})
export class AppModule {
  static forRoot(config: Config): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule,
        UsersModule,
        TeamsModule,
        TokensModule,
        AuthModule,
        ApiV1Module,
      ],
    };
  }
}
