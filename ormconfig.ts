import { loadConfig } from './src/config/config.js';
import { dataSourceFor } from './src/entities.js';

/** The data source of the TypeORM CLI, configured like the app from the same environment. */
export const dataSource = dataSourceFor(loadConfig().database);
