import { describe, expect, it } from '@jest/globals';
import { QueryFailedError } from 'typeorm';
import { safeError } from './error-serializer.js';

describe('safeError', () => {
  it('should keep the type, message, stack and codes of a database error, not its statement or row', () => {
    const driverError = Object.assign(new Error("Unknown column 'name' in 'field list'"), {
      code: 'ER_BAD_FIELD_ERROR',
      errno: 1054,
      sqlState: '42S22',
      sql: "INSERT INTO users VALUES ('Ada', '$argon2id$v=19$secret')",
    });
    const error = new QueryFailedError(
      'INSERT INTO users (name, password_hash) VALUES (?, ?)',
      ['Ada', '$argon2id$v=19$secret'],
      driverError,
    );

    const logged = safeError(error);

    expect(logged).toEqual({
      type: 'QueryFailedError',
      message: "Unknown column 'name' in 'field list'",
      stack: expect.stringContaining('QueryFailedError'),
      code: 'ER_BAD_FIELD_ERROR',
      errno: 1054,
      sqlState: '42S22',
    });
    expect(JSON.stringify(logged)).not.toContain('argon2id');
  });

  it('should tell a cause by its message and stack only, and describe what is not an Error', () => {
    const error = new Error('outer', {
      cause: Object.assign(new Error('inner'), { parameters: ['s3cret'] }),
    });

    const logged = safeError(error);

    expect(Object.keys(logged).sort()).toEqual(['message', 'stack', 'type']);
    expect(logged.stack).toMatch(/caused by: Error: inner/);
    expect(JSON.stringify(logged)).not.toContain('s3cret');
    expect(safeError('plain text')).toEqual({ message: 'plain text' });
  });
});
