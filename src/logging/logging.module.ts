import { Global, Module, type DynamicModule } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { DestinationStream, Logger } from 'pino';
import type { Config } from '../config/config.js';
import { safeError } from './error-serializer.js';
import { createRootLogger } from './root-logger.js';

export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

/**
 * Logging through nestjs-pino: Nest's own messages and every `new Logger(context)` become JSON
 * lines of one pino logger (`app.useLogger(app.get(Logger))` in configureApp). The request line
 * is written by `requestLogger`, mounted first in configureApp so that requests answered before
 * routing are logged too.
 *
 * nestjs-pino's per-request middleware is not mounted (`forRoutes: []`): it keeps each
 * request's logger in an AsyncLocalStorage, which on Node 20 turns on promise hooks for every
 * promise and cost about 40 µs of CPU per API request in our benchmark. Lines logged while
 * handling a request name its `reqId` explicitly instead (see AllExceptionsFilter).
 */
@Global()
@Module({})
export class LoggingModule {
  static forRoot(config: Config, destination?: DestinationStream): DynamicModule {
    const root = createRootLogger(config, destination);
    return {
      module: LoggingModule,
      imports: [
        LoggerModule.forRoot({
          // The root's own error serializer: pino-http would otherwise put its default back.
          pinoHttp: { logger: root, wrapSerializers: false, serializers: { err: safeError } },
          useExisting: true,
          forRoutes: [],
        }),
      ],
      providers: [{ provide: ROOT_LOGGER, useValue: root }],
      exports: [ROOT_LOGGER],
    };
  }
}

export type RootLogger = Logger;
