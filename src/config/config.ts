import { AbilityCatalog, readAbilitiesConfig } from './abilities.config.js';
import { readAppConfig, type AppConfig } from './app.config.js';
import { environment } from './environment.js';
import { readDatabaseConfig, type DatabaseConfig } from './database.config.js';
import { EnvReader } from './env-reader.js';
import { readMailConfig, type MailConfig } from './mail.config.js';
import { readTeamsConfig, type TeamsConfig } from './teams.config.js';
import { readObservabilityConfig, type ObservabilityConfig } from './observability.config.js';
import { readSecurityConfig, type SecurityConfig } from './security.config.js';
import { readTokensConfig, type TokensConfig } from './tokens.config.js';
import { readWebConfig, type WebConfig } from './web.config.js';
import { readWebhooksConfig, type WebhooksConfig } from './webhooks.config.js';

export interface Config {
  app: AppConfig;
  database: DatabaseConfig;
  web: WebConfig;
  security: SecurityConfig;
  observability: ObservabilityConfig;
  mail: MailConfig;
  teams: TeamsConfig;
  tokens: TokensConfig;
  webhooks: WebhooksConfig;
  /** The abilities tokens may be given: Tessera's own and ABILITIES_FILE's. */
  abilities: AbilityCatalog;
  /** What start-up should warn the operator about. */
  warnings: string[];
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Validates the environment once at boot; every bad variable is named in one error. */
export function loadConfig(env: Record<string, string | undefined> = environment()): Config {
  const r = new EnvReader(env);
  const app = readAppConfig(r);
  const config: Config = {
    app,
    database: readDatabaseConfig(r),
    web: readWebConfig(r, app.nodeEnv),
    security: readSecurityConfig(r),
    observability: readObservabilityConfig(r, app),
    mail: readMailConfig(r, app),
    teams: readTeamsConfig(r),
    tokens: readTokensConfig(r),
    webhooks: readWebhooksConfig(r, app.nodeEnv),
    abilities: readAbilitiesConfig(r),
    warnings: r.warnings,
  };
  if (
    app.nodeEnv === 'production' &&
    app.publicUrl.startsWith('https:') &&
    !config.web.trustProxy
  ) {
    r.problems.push(
      'TRUST_PROXY: required in production with an https APP_URL: Tessera serves plain http, so it learns from the TLS proxy in front that a request came over https; without it no session cookie (Secure, __Host-) is set and nobody can sign in. Set it to the proxy hops in front (TRUST_PROXY=1) or their addresses',
    );
  }
  if (r.problems.length > 0) {
    throw new ConfigError(r.problems);
  }
  return config;
}
