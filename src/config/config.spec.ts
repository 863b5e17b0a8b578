import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig as load } from './config.js';
import { parseDatabaseUrl } from './database-url.js';
import { redactUrl } from './env-reader.js';

/** Development keeps its session secret in a file: here, one of this spec's own. */
const scratch = mkdtempSync(join(tmpdir(), 'tessera-config-'));
const loadConfig = (env: Record<string, string | undefined> = {}) =>
  load({ SESSION_SECRET_FILE: join(scratch, 'session-secret'), ...env });

describe('loadConfig', () => {
  it('should default to port 3000 and the embedded SQLite file when nothing is set', () => {
    const config = loadConfig({});
    expect(config.app).toMatchObject({ port: 3000, nodeEnv: 'development', logLevel: 'log' });
    expect(config.database).toEqual({
      target: { type: 'sqlite', database: 'data/tessera.sqlite' },
      migrate: true,
      poolSize: 10,
      queryTimeoutMs: 1500,
      livenessStallMs: 30_000,
    });
  });

  it('should collect every bad variable in one error when several are wrong', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: '70000', NODE_ENV: 'staging', DB_POOL_SIZE: '0' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      'NODE_ENV="staging": must be one of development, production, test',
      'PORT="70000": must be a whole number from 0 to 65535',
      'DB_POOL_SIZE="0": must be a whole number from 1 to 1000',
    ]);
  });

  it('should read DB_MIGRATE as a boolean when given in the usual spellings', () => {
    expect(loadConfig({ DB_MIGRATE: 'false' }).database.migrate).toBe(false);
    expect(loadConfig({ DB_MIGRATE: 'NO' }).database.migrate).toBe(false);
    expect(loadConfig({ DB_MIGRATE: '1' }).database.migrate).toBe(true);
  });

  it("should take pino's level names as Nest's nearest when LOG_LEVEL is info or trace", () => {
    expect(loadConfig({ LOG_LEVEL: 'info' }).app.logLevel).toBe('log');
    expect(loadConfig({ LOG_LEVEL: 'TRACE' }).app.logLevel).toBe('verbose');
    expect(loadConfig({ LOG_LEVEL: 'debug' }).app.logLevel).toBe('debug');
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL="loud": must be one of/);
  });
});

describe('token settings', () => {
  it('should set no maximum token lifetime when TOKEN_MAX_LIFETIME_DAYS is unset', () => {
    expect(loadConfig({}).tokens).toEqual({ maxLifetimeDays: null, auditRetentionDays: 365 });
    expect(loadConfig({ TOKEN_MAX_LIFETIME_DAYS: ' ' }).tokens.maxLifetimeDays).toBeNull();
  });

  it('should read TOKEN_MAX_LIFETIME_DAYS as whole days from 1 to 3650, refusing anything else at boot', () => {
    expect(loadConfig({ TOKEN_MAX_LIFETIME_DAYS: '90' }).tokens.maxLifetimeDays).toBe(90);
    for (const bad of ['0', '3651', '30d', '-1', '1.5']) {
      expect(() => loadConfig({ TOKEN_MAX_LIFETIME_DAYS: bad })).toThrow(
        `TOKEN_MAX_LIFETIME_DAYS=${JSON.stringify(bad)}: must be a whole number from 1 to 3650`,
      );
    }
  });
});

describe('security log settings', () => {
  it('should keep events AUDIT_RETENTION_DAYS days, from 1 to 36500, refusing anything else at boot', () => {
    expect(loadConfig({ AUDIT_RETENTION_DAYS: '30' }).tokens.auditRetentionDays).toBe(30);
    for (const bad of ['0', '36501', '1y', '-5']) {
      expect(() => loadConfig({ AUDIT_RETENTION_DAYS: bad })).toThrow(
        `AUDIT_RETENTION_DAYS=${JSON.stringify(bad)}: must be a whole number from 1 to 36500`,
      );
    }
  });
});

describe('Redis settings', () => {
  it('should bound each Redis call by REDIS_COMMAND_TIMEOUT_MS, 500 ms unless set, refusing anything but 10 to 60000 at boot', () => {
    expect(loadConfig({}).security.rateLimit.redisCommandTimeoutMs).toBe(500);
    expect(
      loadConfig({ REDIS_COMMAND_TIMEOUT_MS: '2000' }).security.rateLimit.redisCommandTimeoutMs,
    ).toBe(2000);
    for (const bad of ['0', '9', '60001', '1s']) {
      expect(() => loadConfig({ REDIS_COMMAND_TIMEOUT_MS: bad })).toThrow(
        `REDIS_COMMAND_TIMEOUT_MS=${JSON.stringify(bad)}: must be a whole number from 10 to 60000`,
      );
    }
  });
});

describe('webhook delivery settings', () => {
  it('should keep a connection to an endpoint idle for WEBHOOK_KEEP_ALIVE_MS, 4000 ms unless set, 0 for none, refusing anything but 0 to 60000 at boot', () => {
    expect(loadConfig({}).webhooks.keepAliveMs).toBe(4000);
    expect(loadConfig({ WEBHOOK_KEEP_ALIVE_MS: '0' }).webhooks.keepAliveMs).toBe(0);
    for (const bad of ['-1', '60001', '4s']) {
      expect(() => loadConfig({ WEBHOOK_KEEP_ALIVE_MS: bad })).toThrow(
        `WEBHOOK_KEEP_ALIVE_MS=${JSON.stringify(bad)}: must be a whole number from 0 to 60000`,
      );
    }
  });
});

describe('observability settings', () => {
  const problemsOf = (env: Record<string, string>): string[] => {
    try {
      loadConfig(env);
      return [];
    } catch (error) {
      return (error as ConfigError).problems;
    }
  };

  it('should keep metrics off and docs and request logs on when nothing is set', () => {
    expect(loadConfig({}).observability).toEqual({
      logFormat: 'pretty',
      logRequests: true,
      apiDocs: true,
      metrics: { enabled: false, port: null, host: '0.0.0.0', token: null },
    });
  });

  it('should refuse metrics enabled with neither a port of their own nor a secret', () => {
    expect(problemsOf({ METRICS_ENABLED: 'true' })).toEqual([
      expect.stringMatching(/^METRICS_ENABLED is on: set METRICS_PORT .* or METRICS_TOKEN/),
    ]);
  });

  it('should refuse a short metrics secret, a metrics port equal to PORT, and an unknown log format', () => {
    expect(
      problemsOf({
        METRICS_ENABLED: 'true',
        METRICS_TOKEN: 'short',
        METRICS_PORT: '3000',
        LOG_FORMAT: 'xml',
      }),
    ).toEqual([
      'METRICS_TOKEN: must be at least 32 characters',
      'METRICS_PORT=3000: must differ from PORT',
      'LOG_FORMAT="xml": must be one of json, pretty',
    ]);
  });

  it('should accept metrics behind a secret or on their own port', () => {
    const token = 's'.repeat(32);
    expect(
      loadConfig({ METRICS_ENABLED: 'true', METRICS_TOKEN: token }).observability.metrics,
    ).toEqual({ enabled: true, port: null, host: '0.0.0.0', token });
    expect(
      loadConfig({ METRICS_ENABLED: 'true', METRICS_PORT: '9464', METRICS_HOST: '127.0.0.1' })
        .observability.metrics,
    ).toEqual({ enabled: true, port: 9464, host: '127.0.0.1', token: null });
  });
});

describe('parseDatabaseUrl', () => {
  it('should read SQLite files and memory when given sqlite: URLs', () => {
    expect(parseDatabaseUrl('sqlite:data/x.sqlite')).toEqual({
      type: 'sqlite',
      database: 'data/x.sqlite',
    });
    expect(parseDatabaseUrl('sqlite::memory:')).toEqual({ type: 'sqlite', database: ':memory:' });
  });

  it('should read MySQL and MariaDB URLs with encoded credentials', () => {
    expect(parseDatabaseUrl('mariadb://app:p%40ss@db:3307/tessera')).toEqual({
      type: 'mariadb',
      host: 'db',
      port: 3307,
      username: 'app',
      password: 'p@ss',
      database: 'tessera',
    });
    expect(parseDatabaseUrl('mysql://root@127.0.0.1/test')).toMatchObject({
      type: 'mysql',
      port: 3306,
    });
  });

  it('should explain what is wrong when the URL cannot be used', () => {
    expect(parseDatabaseUrl('sqlite:')).toMatch(/file path/);
    expect(parseDatabaseUrl('postgres://h/db')).toMatch(/unsupported scheme/);
    expect(parseDatabaseUrl('mysql://host')).toMatch(/database name/);
    expect(parseDatabaseUrl('nonsense')).toBe('not a URL');
  });

  it('should mask the password when a URL is shown', () => {
    expect(redactUrl('mysql://app:secret@db/tessera')).toBe('mysql://app:***@db/tessera');
  });

  it.each([
    ['DATABASE_URL', 'mysql:/app:s3cretPW@db/tessera'],
    ['DATABASE_URL', 'mysql:app:s3cretPW@db'],
    ['MAIL_URL', 'smtps:/mailer:s3cretPW@smtp.example.com:465'],
    ['REDIS_URL', 'rediss:/default:s3cretPW@127.0.0.1:6379'],
    ['REDIS_URL', 'redis:s3cretPW@127.0.0.1:6379'],
  ])('should not show the password of a mistyped %s (%s)', (name, value) => {
    let message = '';
    try {
      loadConfig({ NODE_ENV: 'production', [name]: value });
    } catch (error) {
      message = String(error);
    }
    expect(message).toContain(name);
    expect(message).not.toContain('s3cretPW');
  });
});

describe('loadConfig, public URL', () => {
  it('should default APP_URL to localhost on PORT and drop a trailing slash', () => {
    expect(loadConfig({ PORT: '8080' }).app.publicUrl).toBe('http://localhost:8080');
    expect(loadConfig({ APP_URL: 'https://tessera.example.com/' }).app.publicUrl).toBe(
      'https://tessera.example.com',
    );
    expect(loadConfig({ APP_URL: 'https://example.com/tessera/' }).app.publicUrl).toBe(
      'https://example.com/tessera',
    );
  });

  it('should warn when APP_URL is unset outside development, since each process guesses it from its own PORT', () => {
    const warning = (env: Record<string, string>) =>
      loadConfig(env).warnings.filter((w) => w.startsWith('APP_URL'));
    expect(warning({ NODE_ENV: 'test', PORT: '4000' })).toEqual([
      "APP_URL is not set: links in mail and those the command line prints say http://localhost:4000 (from this process's PORT); set APP_URL to where people reach this deployment.",
    ]);
    expect(
      warning({
        NODE_ENV: 'production',
        SESSION_SECRET: 'a production secret with enough entropy: 7f3kQ9zX2mWv',
        EMAIL_VERIFICATION: 'off',
      }),
    ).toHaveLength(1);
    expect(warning({})).toEqual([]);
    expect(warning({ NODE_ENV: 'development' })).toEqual([]);
    expect(warning({ NODE_ENV: 'test', APP_URL: 'https://tessera.example.com' })).toEqual([]);
  });

  it('should refuse an APP_URL that is not an absolute http(s) URL', () => {
    for (const value of ['tessera.example.com', 'ftp://example.com', 'https://x.example/?a=1']) {
      expect(() => loadConfig({ APP_URL: value })).toThrow(/APP_URL=.*must be/);
    }
  });
});

describe('loadConfig, proxies and secrets', () => {
  describe('TRUST_PROXY', () => {
    const problemsOf = (env: Record<string, string>): string[] => {
      try {
        loadConfig(env);
        return [];
      } catch (error) {
        return (error as ConfigError).problems;
      }
    };

    it('should refuse true in production, since any client could then choose its own IP', () => {
      const problems = problemsOf({ ...PRODUCTION, TRUST_PROXY: 'true' });
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/^TRUST_PROXY="true": .*leftmost X-Forwarded-For.*hop/);
    });

    it('should accept true outside production with a warning saying what to use instead', () => {
      const config = loadConfig({ TRUST_PROXY: 'true' });
      expect(config.web.trustProxy).toBe(true);
      expect(config.warnings.join('\n')).toMatch(/TRUST_PROXY=1/);
    });

    it('should accept a hop count and lists of addresses, subnets and names', () => {
      expect(loadConfig({ TRUST_PROXY: '1' }).web.trustProxy).toBe(1);
      expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, loopback' }).web.trustProxy).toBe(
        '10.0.0.0/8,loopback',
      );
    });

    it('should refuse in production a hop count above 5, naming TRUST_PROXY, and warn elsewhere', () => {
      for (const value of ['6', '99']) {
        const problems = problemsOf({ ...PRODUCTION, TRUST_PROXY: value });
        expect(problems).toHaveLength(1);
        expect(problems[0]).toMatch(
          new RegExp(`^TRUST_PROXY="${value}": ${value} proxy hops is more than .*at most 5`),
        );
      }
      expect(() => loadConfig({ ...PRODUCTION, TRUST_PROXY: '99' })).toThrow(/TRUST_PROXY="99"/);
      expect(loadConfig({ ...PRODUCTION, TRUST_PROXY: '5' }).web.trustProxy).toBe(5);
      const config = loadConfig({ TRUST_PROXY: '99' });
      expect(config.web.trustProxy).toBe(99);
      expect(config.warnings.join('\n')).toMatch(
        /TRUST_PROXY: 99 proxy hops .*refuses more than 5/,
      );
    });

    it('should refuse an https APP_URL in production without it, since no session cookie could then be set', () => {
      const https = { ...PRODUCTION, APP_URL: 'https://tessera.example.com' };
      expect(problemsOf(https)).toEqual([
        expect.stringMatching(/^TRUST_PROXY: required in production with an https APP_URL/),
      ]);
      expect(loadConfig({ ...https, TRUST_PROXY: '1' }).web.trustProxy).toBe(1);
      expect(problemsOf({ ...PRODUCTION, APP_URL: 'http://tessera.internal:3000' })).toEqual([]);
      expect(problemsOf({ NODE_ENV: 'test', APP_URL: 'https://tessera.example.com' })).toEqual([]);
    });

    it('should refuse in production ranges that together trust every address, and warn elsewhere', () => {
      for (const value of [
        '0.0.0.0/1,128.0.0.0/1',
        '::/1, 8000::/1',
        '0.0.0.0/1,128.0.0.0/128.0.0.0',
      ]) {
        const problems = problemsOf({ ...PRODUCTION, TRUST_PROXY: value });
        expect(problems).toHaveLength(1);
        expect(problems[0]).toMatch(
          /^TRUST_PROXY=".*": these ranges together trust every IPv4 address/,
        );
      }
      const config = loadConfig({ TRUST_PROXY: '0.0.0.0/1,128.0.0.0/1' });
      expect(config.warnings.join('\n')).toContain('trust every IPv4 address');
      expect(problemsOf({ ...PRODUCTION, TRUST_PROXY: '0.0.0.0/1,128.0.0.0/2' })).toEqual([]);
    });

    it('should refuse at load, in one line, what Express would fail on at start', () => {
      for (const value of ['0.0.0.0/0', '::/0', '10.0.0.300', 'example.com']) {
        const problems = problemsOf({ TRUST_PROXY: value });
        expect(problems).toHaveLength(1);
        expect(problems[0]).toContain(`TRUST_PROXY="${value}": invalid`);
        expect(problems[0]).not.toContain('\n');
      }
    });
  });

  describe('SESSION_SECRET', () => {
    it('should make a development secret once, keep it in a file only its owner reads, and use it again', () => {
      const file = join(mkdtempSync(join(tmpdir(), 'tessera-secret-')), 'data', 'session-secret');
      expect(existsSync(file)).toBe(false);
      const first = loadConfig({ SESSION_SECRET_FILE: file });
      expect(first.web.sessionSecret.length).toBeGreaterThanOrEqual(32);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(readFileSync(file, 'utf8').trim()).toBe(first.web.sessionSecret);
      // A restart: the same secret, so sessions and two-factor secrets stay readable.
      expect(loadConfig({ SESSION_SECRET_FILE: file }).web.sessionSecret).toBe(
        first.web.sessionSecret,
      );
      expect(first.warnings.join('\n')).toContain(`the development secret kept in ${file}`);
      // Set, the variable wins; tests and production never read or write the file.
      expect(
        loadConfig({
          SESSION_SECRET_FILE: file,
          SESSION_SECRET: 'x'.repeat(16) + randomBytes(16).toString('hex'),
        }).web.sessionSecret,
      ).not.toBe(first.web.sessionSecret);
      const other = join(scratch, 'never-made');
      expect(
        loadConfig({ NODE_ENV: 'test', SESSION_SECRET_FILE: other }).web.sessionSecret,
      ).not.toBe(loadConfig({ NODE_ENV: 'test', SESSION_SECRET_FILE: other }).web.sessionSecret);
      expect(existsSync(other)).toBe(false);
    });

    it('should refuse a development secret file that holds no usable secret', () => {
      const file = join(scratch, 'short-secret');
      writeFileSync(file, 'short\n');
      expect(() => loadConfig({ SESSION_SECRET_FILE: file })).toThrow(
        /SESSION_SECRET_FILE: .* holds no usable secret/,
      );
    });

    it('should refuse in production a secret that is long enough but predictable, and say how to make one', () => {
      expect(() => loadConfig({ ...PRODUCTION, SESSION_SECRET: 'a'.repeat(32) })).toThrow(
        /SESSION_SECRET: too predictable .*openssl rand -base64 32/,
      );
      expect(() => loadConfig({ ...PRODUCTION, SESSION_SECRET: 'abab'.repeat(16) })).toThrow(
        /too predictable/,
      );
    });

    it('should accept 32 random bytes in base64 or hex', () => {
      for (const encoding of ['base64', 'base64url', 'hex'] as const) {
        const secret = randomBytes(32).toString(encoding);
        expect(loadConfig({ ...PRODUCTION, SESSION_SECRET: secret }).web.sessionSecret).toBe(
          secret,
        );
      }
    });

    it('should only warn about a predictable secret outside production', () => {
      const config = loadConfig({ SESSION_SECRET: 'a'.repeat(32) });
      expect(config.warnings.join('\n')).toMatch(/SESSION_SECRET: too predictable/);
    });
  });
});

const PRODUCTION = {
  NODE_ENV: 'production',
  SESSION_SECRET: randomBytes(32).toString('base64'),
  MAIL_URL: 'smtp://mail.example.com:587',
};

describe('mail settings', () => {
  const problemsOf = (env: Record<string, string>): string[] => {
    try {
      loadConfig(env);
      return [];
    } catch (error) {
      return (error as ConfigError).problems;
    }
  };

  it('should write mail to files and require confirmation when nothing is set', () => {
    expect(loadConfig({}).mail).toEqual({
      smtpUrl: null,
      from: 'Tessera <no-reply@localhost>',
      dir: 'data/mail',
      verification: 'required',
      maxAttempts: 8,
      retrySeconds: 15,
      pollSeconds: 10,
    });
  });

  it('should send from the host of APP_URL unless MAIL_FROM says otherwise', () => {
    expect(loadConfig({ APP_URL: 'https://tessera.example.com' }).mail.from).toBe(
      'Tessera <no-reply@tessera.example.com>',
    );
    expect(loadConfig({ MAIL_FROM: 'Ops <ops@example.com>' }).mail.from).toBe(
      'Ops <ops@example.com>',
    );
  });

  it('should accept smtp:// and smtps:// URLs and name a bad one without its password', () => {
    expect(loadConfig({ MAIL_URL: 'smtps://u:p@mail.example.com:465' }).mail.smtpUrl).toBe(
      'smtps://u:p@mail.example.com:465',
    );
    const problems = problemsOf({
      MAIL_URL: 'http://user:hunter2@mail.example.com',
      MAIL_FROM: 'not an address',
      EMAIL_VERIFICATION: 'sometimes',
    });
    expect(problems).toEqual([
      expect.stringMatching(/^MAIL_URL="http:\/\/user:\*\*\*@mail.example.com": must be smtp:/),
      expect.stringMatching(/^MAIL_FROM="not an address": must be one address/),
      'EMAIL_VERIFICATION="sometimes": must be one of required, off',
    ]);
    expect(problems.join('\n')).not.toContain('hunter2');
  });

  it('should refuse required confirmation without MAIL_URL in production, and only warn when it is off', () => {
    const noMail = { ...PRODUCTION, MAIL_URL: '' };
    expect(problemsOf(noMail)).toEqual([
      expect.stringMatching(/^EMAIL_VERIFICATION=required needs MAIL_URL in production/),
    ]);
    const off = loadConfig({ ...noMail, EMAIL_VERIFICATION: 'off' });
    expect(off.warnings.join('\n')).toMatch(/MAIL_URL is not set: messages .* data\/mail/);
  });
});
