import { describe, expect, it } from '@jest/globals';
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
});
