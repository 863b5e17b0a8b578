import pino, { type DestinationStream, type Level, type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { Clock } from '../clock/clock.js';
import type { LogLevel } from '../config/app.config.js';
import type { Config } from '../config/config.js';
import { safeError } from './error-serializer.js';

export const ROOT_LOGGER = Symbol('ROOT_LOGGER');
export const ACCESS_LOGGER = Symbol('ACCESS_LOGGER');

/** LOG_LEVEL speaks Nest's names; pino's differ for two of them. */
const PINO_LEVEL: Record<LogLevel, Level> = {
  fatal: 'fatal',
  error: 'error',
  warn: 'warn',
  log: 'info',
  debug: 'debug',
  verbose: 'trace',
};

const REDACTED = '[redacted]';

/**
 * Paths no log line may carry, whatever object is logged: credentials in headers, session
 * cookies, passwords and CSRF tokens in form bodies. The request log's own serializers never
 * include headers or bodies; this is the rule that holds when someone logs them anyway.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-csrf-token"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  'headers["set-cookie"]',
  'req.body.password',
  'req.body.currentPassword',
  'req.body.newPassword',
  'req.body._csrf',
  'body.password',
  'body.currentPassword',
  'body.newPassword',
  'body._csrf',
  'password',
  'currentPassword',
  'newPassword',
  '_csrf',
  'csrfToken',
  'token',
  'plaintext',
];

/** The most bytes of access lines one write carries (whole lines; sonic-boom's own default). */
export const ACCESS_LOG_BUFFER_BYTES = 16_384;

/**
 * pino's ISO time, read from the application's clock and made once a millisecond rather than
 * once a line: under load several lines share a millisecond, and `toISOString()` is a good part
 * of writing one.
 */
export function isoTimeOf(clock: Clock): () => string {
  let stampedAt = -1;
  let stamp = '';
  return () => {
    const now = clock.nowMs();
    if (now !== stampedAt) {
      stampedAt = now;
      stamp = `,"time":"${new Date(now).toISOString()}"`;
    }
    return stamp;
  };
}

function pinoOptions(config: Config, clock: Clock): pino.LoggerOptions {
  return {
    level: PINO_LEVEL[config.app.logLevel],
    redact: { paths: REDACT_PATHS, censor: REDACTED },
    serializers: { err: safeError },
    formatters: { level: (label) => ({ level: label }) },
    timestamp: isoTimeOf(clock),
  };
}

/**
 * The process's pino logger for everything but the access lines: JSON lines on stdout, each
 * written before the call returns, so a warning or an error is on its way out even if the
 * process dies at the next instruction; readable lines in development. Lines are stamped with
 * `clock`'s time. `destination` replaces stdout (tests capture lines through it).
 */
export function createRootLogger(
  config: Config,
  clock: Clock,
  destination?: DestinationStream,
): Logger {
  const stream =
    config.observability.logFormat === 'pretty'
      ? pretty({
          colorize: !destination && process.stdout.isTTY,
          sync: true,
          ignore: 'pid,hostname,context',
          // One line an entry, Nest's context first: `INFO: (Tessera) Listening on …`.
          singleLine: true,
          messageFormat: '{if context}({context}) {end}{msg}',
          destination: destination ?? 1,
        })
      : (destination ?? pino.destination({ dest: 1, sync: true }));
  return pino(pinoOptions(config, clock), stream);
}

/**
 * The access log's logger: the same lines, buffered. In production JSON they gather in pino's
 * asynchronous destination and leave in writes of whole lines, 12 to 16 KiB each (one write for
 * about 40 requests); `AccessLog` (http/request-log.ts) flushes it every second and at shutdown, and pino at exit. A hard crash (a kill,
 * the machine) loses at most what was buffered: the access lines of the last second.
 * In development and under test it is the root logger itself.
 */
export function createAccessLogger(
  config: Config,
  clock: Clock,
  root: Logger,
  destination?: DestinationStream,
): Logger {
  if (destination || config.observability.logFormat === 'pretty') return root;
  return pino(
    pinoOptions(config, clock),
    pino.destination({
      dest: 1,
      sync: false,
      // A write once a few lines short of a full one (sonic-boom wants the two apart).
      minLength: ACCESS_LOG_BUFFER_BYTES - 4096,
      maxWrite: ACCESS_LOG_BUFFER_BYTES,
    }),
  );
}
