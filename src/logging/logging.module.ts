import { Global, Module, type DynamicModule } from '@nestjs/common';
import { Logger, type PinoLogger } from 'nestjs-pino';
import type { DestinationStream, Logger as PinoRoot } from 'pino';
import { Clock } from '../clock/clock.js';
import type { Config } from '../config/config.js';
import { ACCESS_LOGGER, createAccessLogger, createRootLogger, ROOT_LOGGER } from './root-logger.js';

export { ACCESS_LOGGER, ROOT_LOGGER } from './root-logger.js';

/**
 * Logging through nestjs-pino's `Logger`: Nest's own messages and every `new Logger(context)`
 * become JSON lines of one pino logger (`app.useLogger(app.get(Logger))` in configureApp). The
 * request line is written by `AccessLog` (http/request-log.ts), told by the first layer of configureApp so that requests
 * answered before routing are logged too.
 *
 * The `Logger` writes straight to this app's root logger. nestjs-pino's `LoggerModule` is not
 * used: its per-request middleware keeps each request's logger in an AsyncLocalStorage (about
 * 40 µs of CPU per API request in our benchmark), and its root logger is one per process, kept
 * from the first app built, so a second app in the same process (the e2e specs build many)
 * would write to the first one's destination.
 */
@Global()
@Module({})
export class LoggingModule {
  static forRoot(config: Config, destination?: DestinationStream): DynamicModule {
    return {
      module: LoggingModule,
      providers: [
        // Lines carry the time of the application's clock (ClockModule is global).
        {
          provide: ROOT_LOGGER,
          useFactory: (clock: Clock) => createRootLogger(config, clock, destination),
          inject: [Clock],
        },
        {
          provide: ACCESS_LOGGER,
          useFactory: (clock: Clock, root: PinoRoot) =>
            createAccessLogger(config, clock, root, destination),
          inject: [Clock, ROOT_LOGGER],
        },
        // The Logger only calls its logger's level methods, which pino's own logger has.
        {
          provide: Logger,
          useFactory: (root: PinoRoot) => new Logger(root as unknown as PinoLogger, {}),
          inject: [ROOT_LOGGER],
        },
      ],
      exports: [ROOT_LOGGER, ACCESS_LOGGER, Logger],
    };
  }
}

export type RootLogger = PinoRoot;
