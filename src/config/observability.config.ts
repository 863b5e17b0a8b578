import { boolean, EnvReader, integer, oneOf, text } from './env-reader.js';

export const LOG_FORMATS = ['json', 'pretty'] as const;

export interface MetricsConfig {
  enabled: boolean;
  /** A listener of its own for /metrics (0: any free port); null serves it on the main port, behind `token`. */
  port: number | null;
  host: string;
  /** The bearer secret a scraper must send; required on the main port. */
  token: string | null;
}

export interface ObservabilityConfig {
  /** One JSON object a line, or readable lines for a person at a terminal. */
  logFormat: (typeof LOG_FORMATS)[number];
  /** One line per HTTP request (the access log). */
  logRequests: boolean;
  /** GET /api/v1/openapi.json and the docs page at /api/docs. */
  apiDocs: boolean;
  metrics: MetricsConfig;
}

const MIN_METRICS_TOKEN_LENGTH = 32;

const optionalPort = (raw: string): number | null | { error: string } =>
  raw === '' ? null : integer(0, 65535)(raw);

export function readObservabilityConfig(
  r: EnvReader,
  app: { nodeEnv: string; port: number; host: string },
): ObservabilityConfig {
  const metrics: MetricsConfig = {
    enabled: r.read('METRICS_ENABLED', 'false', boolean),
    port: r.read('METRICS_PORT', '', optionalPort),
    host: r.read('METRICS_HOST', app.host, text),
    token: r.env.METRICS_TOKEN?.trim() || null,
  };
  if (metrics.token !== null && metrics.token.length < MIN_METRICS_TOKEN_LENGTH) {
    r.problems.push(`METRICS_TOKEN: must be at least ${MIN_METRICS_TOKEN_LENGTH} characters`);
  }
  if (metrics.enabled && metrics.port === null && metrics.token === null) {
    r.problems.push(
      'METRICS_ENABLED is on: set METRICS_PORT to serve /metrics on a port of its own, or METRICS_TOKEN to serve it on the main port behind that bearer secret',
    );
  }
  if (metrics.enabled && metrics.port !== null && metrics.port !== 0 && metrics.port === app.port) {
    r.problems.push(`METRICS_PORT=${metrics.port}: must differ from PORT`);
  }
  return {
    logFormat: r.read(
      'LOG_FORMAT',
      app.nodeEnv === 'development' ? 'pretty' : 'json',
      oneOf(LOG_FORMATS),
    ),
    logRequests: r.read('LOG_REQUESTS', 'true', boolean),
    apiDocs: r.read('API_DOCS_ENABLED', 'true', boolean),
    metrics,
  };
}
