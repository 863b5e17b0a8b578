import { EnvReader, integer, oneOf, text } from './env-reader.js';

export const NODE_ENVS = ['development', 'production', 'test'] as const;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface AppConfig {
  nodeEnv: (typeof NODE_ENVS)[number];
  port: number;
  host: string;
  logLevel: LogLevel;
}

export function readAppConfig(r: EnvReader): AppConfig {
  const nodeEnv = r.read('NODE_ENV', 'development', oneOf(NODE_ENVS));
  return {
    nodeEnv,
    port: r.read('PORT', '3000', integer(0, 65535)),
    host: r.read('HOST', '0.0.0.0', text),
    logLevel: r.read('LOG_LEVEL', nodeEnv === 'test' ? 'warn' : 'log', oneOf(LOG_LEVELS)),
  };
}
