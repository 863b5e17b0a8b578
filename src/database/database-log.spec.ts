import { describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { loadConfig } from '../config/config.js';
import { DatabaseLog } from './database-log.js';
import { buildDataSourceOptions } from './database-options.js';

describe('DatabaseLog', () => {
  it("should be TypeORM's logger on every database", () => {
    for (const DATABASE_URL of ['sqlite::memory:', 'mariadb://root@127.0.0.1:3306/tessera']) {
      const config = loadConfig({ NODE_ENV: 'test', DATABASE_URL });
      expect(buildDataSourceOptions(config.database, []).logger).toBeInstanceOf(DatabaseLog);
    }
  });

  it('should log a slow statement at warn on one line, without its values', () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      new DatabaseLog().logQuerySlow(3001, 'SELECT s.data\n  FROM sessions s\n WHERE s.id = ?', [
        'HIRJeM0uEtrPnv6N7eeeTzWOtuuEcSQi',
      ]);
      expect(warn.mock.calls).toEqual([
        ['A statement took 3001 ms: SELECT s.data FROM sessions s WHERE s.id = ?'],
      ]);
    } finally {
      warn.mockRestore();
    }
  });
});
