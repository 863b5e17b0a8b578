import { DataSource } from 'typeorm';
import { loadConfig } from './src/config/config.js';
import { dataSourceOptions } from './src/entities.js';

/** The data source of the TypeORM CLI, configured like the app from the same environment. */
export const dataSource = new DataSource(dataSourceOptions(loadConfig().database));
