import { EnvReader, integer, oneOf, text } from './env-reader.js';

export const NODE_ENVS = ['development', 'production', 'test'] as const;
export type NodeEnv = (typeof NODE_ENVS)[number];
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
/** The logs are pino's, so its names are accepted too and mean Nest's nearest level. */
const PINO_NAMES: Record<string, LogLevel> = { info: 'log', trace: 'verbose' };

const logLevel = (raw: string): LogLevel | { error: string } => {
  const name = raw.toLowerCase();
  const level = PINO_NAMES[name] ?? name;
  return (LOG_LEVELS as readonly string[]).includes(level)
    ? (level as LogLevel)
    : { error: `must be one of ${LOG_LEVELS.join(', ')} (or pino's info, trace)` };
};

export interface AppConfig {
  nodeEnv: NodeEnv;
  port: number;
  host: string;
  logLevel: LogLevel;
  /** Where people reach this deployment (APP_URL): absolute links in mail, the API description. */
  publicUrl: string;
  /** Whether APP_URL was set, rather than guessed from this process's own PORT. */
  publicUrlSet: boolean;
}

/**
 * Outside development an unset APP_URL is a guess from each process's own PORT: the command
 * line prints links to port 3000 while the server listens elsewhere. The server logs this at
 * start and the command line says it on stderr.
 */
export function appUrlWarning(app: AppConfig): string | undefined {
  if (app.publicUrlSet || app.nodeEnv === 'development') return undefined;
  return `APP_URL is not set: links in mail and those the command line prints say ${app.publicUrl} (from this process's PORT); set APP_URL to where people reach this deployment.`;
}

const publicUrl = (raw: string): string | { error: string } => {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { error: 'must be an absolute http:// or https:// URL' };
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.search || url.hash) {
    return { error: 'must be an http:// or https:// URL with no query or fragment' };
  }
  return url.toString().replace(/\/+$/, '');
};

export function readAppConfig(r: EnvReader): AppConfig {
  const nodeEnv = r.read('NODE_ENV', 'development', oneOf(NODE_ENVS));
  const port = r.read('PORT', '3000', integer(0, 65535));
  const app: AppConfig = {
    nodeEnv,
    port,
    host: r.read('HOST', '0.0.0.0', text),
    logLevel: r.read('LOG_LEVEL', nodeEnv === 'test' ? 'warn' : 'log', logLevel),
    publicUrl: r.read('APP_URL', `http://localhost:${port ?? 3000}`, publicUrl),
    publicUrlSet: Boolean(r.env.APP_URL?.trim()),
  };
  const warning = appUrlWarning(app);
  if (warning) r.warnings.push(warning);
  return app;
}
