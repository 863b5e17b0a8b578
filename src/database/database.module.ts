import {
  Global,
  Inject,
  Injectable,
  Logger,
  Module,
  type DynamicModule,
  type OnModuleInit,
} from '@nestjs/common';
import { InjectDataSource, TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions } from 'typeorm';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { DatabaseCluster } from './database-cluster.js';
import { DatabaseHealth } from './database-health.js';
import { buildDataSourceOptions } from './database-options.js';
import { runMigrations } from './migrator.js';
import { SchemaState } from './schema-state.js';
import { Transactions } from './transactions.js';

/** Brings the schema up to date before the app serves anything, when DB_MIGRATE allows. */
@Injectable()
class MigrateOnBoot implements OnModuleInit {
  private readonly logger = new Logger('Database');

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(CONFIG) private readonly config: Config,
    private readonly schema: SchemaState,
  ) {}

  async onModuleInit(): Promise<void> {
    if (this.config.database.migrate) {
      let waitingFor: string | undefined;
      const applied = await runMigrations(this.dataSource, {
        onWait: (holder) => {
          if (holder !== waitingFor) this.logger.log(`Waiting for ${holder}'s migrations`);
          waitingFor = holder;
        },
        onTakeover: (holder) =>
          this.logger.warn(`Took the migration lock over from ${holder}, whose lease ran out`),
      });
      if (applied.length > 0) this.logger.log(`Applied migrations: ${applied.join(', ')}`);
      return;
    }
    const pending = await this.schema.refresh();
    if (pending.length === 0) return;
    this.logger.warn(
      `DB_MIGRATE=false and ${pending.length} migration(s) pending (${pending.join(', ')}): ` +
        'requests are answered 503 until `npm run migration:run` applies them',
    );
  }
}

/** The connection, the migrations and transactions, over the entities the app hands it. */
@Global()
@Module({})
export class DatabaseModule {
  static forRoot(entities: NonNullable<DataSourceOptions['entities']>): DynamicModule {
    // One per app: it learns what the server is when the data source connects.
    const cluster = new DatabaseCluster();
    const health = new DatabaseHealth();
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          inject: [CONFIG],
          useFactory: (config: Config) => ({
            ...buildDataSourceOptions(config.database, entities, health),
            retryAttempts: 3,
            retryDelay: 1000,
          }),
          dataSourceFactory: (options) => cluster.connect(options!),
        }),
      ],
      providers: [
        { provide: DatabaseCluster, useValue: cluster },
        MigrateOnBoot,
        SchemaState,
        Transactions,
        { provide: DatabaseHealth, useValue: health },
      ],
      exports: [DatabaseCluster, SchemaState, Transactions, DatabaseHealth],
    };
  }
}
