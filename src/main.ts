// First: an unsupported Node stops here with what to install, before any native module loads.
import './node-version.js';
import 'reflect-metadata';
import { Logger, type INestApplication } from '@nestjs/common';
import { createApp } from './app.factory.js';
import { ConfigError, loadConfig } from './config/config.js';
import { isDatabaseRefusal, isDatabaseUnavailable } from './common/errors/database-errors.js';
import { MigrationFailedError } from './database/migrator.js';

async function bootstrap(): Promise<void> {
  // Until the server listens there is nothing to finish: a stop during start-up (migrations,
  // say) ends the process at once. As PID 1 in a container, node would otherwise ignore it.
  const stopWhileStarting = (signal: NodeJS.Signals) => {
    console.error(`${signal} received while starting; exiting`);
    process.exit(1);
  };
  process.once('SIGTERM', stopWhileStarting).once('SIGINT', stopWhileStarting);
  const config = loadConfig();
  const app = await createApp(config);
  for (const warning of config.warnings) Logger.warn(warning, 'Tessera');
  // Migrations and the modules' own start-up run here, so that what fails among them is not
  // taken for a failure to listen below.
  await app.init();
  try {
    await app.listen(config.app.port, config.app.host);
  } catch (error) {
    // A listener of a module's own (METRICS_PORT) names its own settings.
    if (error instanceof Error && error.message.startsWith('cannot listen')) throw error;
    throw new Error(
      `cannot listen on ${config.app.host}:${config.app.port} (HOST, PORT): ${String(error)}`,
      { cause: error },
    );
  }
  const everywhere = ['0.0.0.0', '::'].includes(config.app.host);
  Logger.log(
    `Listening on ${await app.getUrl()}${everywhere ? ` (all interfaces: HOST=${config.app.host})` : ''}`,
    'Tessera',
  );
  process.off('SIGTERM', stopWhileStarting).off('SIGINT', stopWhileStarting);
  stopGracefullyOn(['SIGTERM', 'SIGINT'], app, config.security.shutdownTimeoutMs);
}

/**
 * On SIGTERM: stop accepting connections, let the requests in flight finish, close the database
 * pool, exit 0. Whatever is still running after the timeout is abandoned and the exit is 1.
 */
function stopGracefullyOn(
  signals: NodeJS.Signals[],
  app: INestApplication,
  timeoutMs: number,
): void {
  const stop = (signal: NodeJS.Signals): void => {
    Logger.log(`${signal} received: finishing requests in flight, then stopping`, 'Tessera');
    setTimeout(() => {
      Logger.error(`Still busy after ${timeoutMs} ms; exiting anyway`, 'Tessera');
      process.exit(1);
    }, timeoutMs).unref();
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        Logger.error(`Could not stop cleanly: ${String(error)}`, 'Tessera');
        process.exit(1);
      },
    );
  };
  for (const signal of signals) process.once(signal, stop);
}

/** One clear line for what operators can fix; the stack only for what they cannot. */
function describeStartupError(error: unknown): string {
  if (error instanceof ConfigError) return error.message;
  if (isDatabaseUnavailable(error) || isDatabaseRefusal(error)) {
    return `Tessera could not start: cannot use the database at DATABASE_URL (${String((error as Error).message)})`;
  }
  if (error instanceof MigrationFailedError) {
    return `Tessera could not start: ${error.message}`;
  }
  if (error instanceof Error && error.message.startsWith('cannot listen')) {
    return `Tessera could not start: ${error.message}`;
  }
  return `Tessera could not start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
}

bootstrap().catch((error: unknown) => {
  console.error(describeStartupError(error));
  process.exit(1);
});
