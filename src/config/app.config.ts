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
  return {
    nodeEnv,
    port,
    host: r.read('HOST', '0.0.0.0', text),
    logLevel: r.read('LOG_LEVEL', nodeEnv === 'test' ? 'warn' : 'log', logLevel),
    publicUrl: r.read('APP_URL', `http://localhost:${port ?? 3000}`, publicUrl),
  };
}
