import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule, type AppOptions } from './app.module.js';
import { SystemClock } from './clock/clock.js';
import { configureApp } from './app.setup.js';
import { ExpressHttpAdapter } from './http/express-adapter.js';
import { saveSessionIfChanged } from './web/session/web-session.js';
import type { Config } from './config/config.js';
import { logLevelsUpTo } from './config/log-levels.js';
import { CoreModule } from './core.module.js';

/**
 * The HTTP application, configured and ready to listen: the server (main.ts) and the e2e tests
 * build it here, so the tests run exactly what is deployed.
 */
export async function createApp(
  config: Config,
  options: AppOptions = {},
): Promise<NestExpressApplication> {
  // One clock for the modules and for what the adapter answers before any module is reached.
  const clock = options.clock ?? new SystemClock();
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.forRoot(config, { ...options, clock }),
    new ExpressHttpAdapter(clock, saveSessionIfChanged),
    {
      // The API takes no body: parsers run for the pages only (see configureApp).
      bodyParser: false,
      logger: logLevelsUpTo(config.app.logLevel),
      // Held until configureApp hands Nest the JSON logger, then written through it.
      bufferLogs: true,
      // A failure at start is thrown to the caller, which says what went wrong.
      abortOnError: false,
    },
  );
  return configureApp(app) as NestExpressApplication;
}

/** The domain and its database without HTTP, for the command line. */
export function createCommandContext(config: Config): Promise<INestApplicationContext> {
  return NestFactory.createApplicationContext(CoreModule.forRoot(config), {
    logger: false,
    abortOnError: false,
  });
}
