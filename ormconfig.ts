import { DataSource } from 'typeorm';
import { loadConfig } from './src/config/config.js';
import { buildDataSourceOptions } from './src/database/database-options.js';

/** The data source of the TypeORM CLI (`npm run migration:run`), configured like the app. */
export const dataSource = new DataSource(buildDataSourceOptions(loadConfig().database));
