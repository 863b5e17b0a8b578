import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { runBuilt } from './support/run-built.js';

describe('boot-time configuration', () => {
  it('should refuse to start on bad settings, naming each variable and what is allowed', async () => {
    const r = await runBuilt('main.js', [], {
      PORT: 'eighty',
      LOG_LEVEL: 'loud',
      DB_MIGRATE: 'perhaps',
      DATABASE_URL: 'postgres://admin:hunter2@db.internal/tessera',
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('PORT="eighty": must be a whole number from 0 to 65535');
    expect(r.stderr).toContain(
      'LOG_LEVEL="loud": must be one of fatal, error, warn, log, debug, verbose',
    );
    expect(r.stderr).toContain('DB_MIGRATE="perhaps": must be true or false');
    expect(r.stderr).toMatch(
      /DATABASE_URL=.*unsupported scheme "postgres:".*allowed: sqlite:<path>/,
    );
    expect(r.stderr).not.toContain('hunter2');
    expect(r.stderr).not.toMatch(/\s+at /);
    expect(r.stdout).not.toContain('Listening');
  });

  it('should refuse to start in production behind more proxy hops than any real chain, naming TRUST_PROXY', async () => {
    const r = await runBuilt('main.js', [], {
      NODE_ENV: 'production',
      SESSION_SECRET: randomBytes(32).toString('base64'),
      MAIL_URL: 'smtp://127.0.0.1:2525',
      TRUST_PROXY: '99',
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/TRUST_PROXY="99": 99 proxy hops is more than any real chain/);
    expect(r.stderr).toContain('at most 5');
    expect(r.stdout).not.toContain('Listening');
  });
});
