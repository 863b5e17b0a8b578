import { existsSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { loadConfig } from './src/config/config.js';
import { buildDataSourceOptions } from './src/database/database-options.js';

// The same environment the server reads, .env included.
if (existsSync('.env')) process.loadEnvFile('.env');

/** The data source of the TypeORM CLI (`npm run migration:run`), configured like the app. */
export const dataSource = new DataSource(buildDataSourceOptions(loadConfig().database));
