import 'reflect-metadata';
import { createApp } from './app.factory.js';
import { createApiDocument } from './api/v1/openapi/api-docs.js';
import { loadConfig } from './config/config.js';
import { environment } from './config/environment.js';

/**
 * Prints the OpenAPI document the server answers at /api/v1/openapi.json, for this
 * configuration (APP_URL names its server), so it can be linted without a running server:
 * `npm run lint:openapi`. The document depends on no data, so it is made over an empty
 * in-memory database.
 */
async function main(): Promise<void> {
  const config = loadConfig({
    ...environment(),
    DATABASE_URL: 'sqlite::memory:',
    LOG_LEVEL: 'fatal',
  });
  const app = await createApp(config);
  try {
    process.stdout.write(`${JSON.stringify(createApiDocument(app), null, 2)}\n`);
  } finally {
    await app.close();
  }
}

main().catch((error: unknown) => {
  console.error(`Could not make the OpenAPI document: ${String(error)}`);
  process.exit(1);
});
