import { LOG_LEVELS, type LogLevel } from './app.config.js';

/** Nest takes the list of levels to print: LOG_LEVEL=warn means fatal, error and warn. */
export function logLevelsUpTo(level: LogLevel): LogLevel[] {
  return LOG_LEVELS.slice(0, LOG_LEVELS.indexOf(level) + 1);
}
