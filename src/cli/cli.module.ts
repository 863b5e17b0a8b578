import { Module, type DynamicModule } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import type { Config } from '../config/config.js';
import { ConfigModule } from '../config/config.module.js';
import { DatabaseModule } from '../database/database.module.js';
import { TeamsModule } from '../teams/teams.module.js';
import { TokensModule } from '../tokens/tokens.module.js';
import { UsersModule } from '../users/users.module.js';

/** The services of the app without its HTTP side, for the operators' command line. */
@Module({})
export class CliModule {
  static forRoot(config: Config): DynamicModule {
    return {
      module: CliModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule,
        UsersModule,
        TeamsModule,
        TokensModule,
        AuthModule,
      ],
    };
  }
}
