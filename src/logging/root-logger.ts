import pino, { type DestinationStream, type Level, type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { LogLevel } from '../config/app.config.js';
import type { Config } from '../config/config.js';
import { safeError } from './error-serializer.js';

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

/**
 * The process's one pino logger: JSON lines on stdout, written asynchronously so a request
 * never waits for the terminal or the log collector; readable lines in development.
 * `destination` replaces stdout (tests capture lines through it).
 */
export function createRootLogger(config: Config, destination?: DestinationStream): Logger {
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
      : (destination ?? pino.destination({ dest: 1, sync: false }));
  return pino(
    {
      level: PINO_LEVEL[config.app.logLevel],
      redact: { paths: REDACT_PATHS, censor: REDACTED },
      serializers: { err: safeError },
      formatters: { level: (label) => ({ level: label }) },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    stream,
  );
}
