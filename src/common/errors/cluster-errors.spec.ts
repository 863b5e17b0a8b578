import { describe, expect, it } from '@jest/globals';
import { isDatabaseUnavailable, isDeadlock } from './database-errors.js';

/** A driver error as TypeORM wraps it (QueryFailedError keeps mysql2's error as driverError). */
const wrapped = (errno: number, code: string) => ({
  message: `${code}`,
  driverError: { errno, code },
});

describe('cluster errors', () => {
  it.each([
    [1047, 'ER_UNKNOWN_COM_ERROR', 'a Galera node outside the primary component'],
    [1180, 'ER_ERROR_DURING_COMMIT', 'a Galera commit the node could not replicate'],
    [1205, 'ER_LOCK_WAIT_TIMEOUT', 'a causal read that could not catch up with the cluster'],
    [1467, 'ER_AUTOINC_READ_FAILED', "a table's AUTO-INC lock not had within the lock wait"],
    [1290, 'ER_OPTION_PREVENTS_STATEMENT', 'a Group Replication secondary (super_read_only)'],
    [1836, 'ER_READ_ONLY_MODE', 'a read-only member'],
    [3100, 'ER_RUN_HOOK_ERROR', 'a Group Replication member that is not ONLINE'],
    [3796, 'ER_GRP_TRX_CONSISTENCY_NOT_ALLOWED', 'consistency not allowed in the member state'],
    [3797, 'ER_GRP_TRX_CONSISTENCY_BEFORE', 'a BEFORE read that could not wait'],
  ])('should answer error %i (%s) as the database unavailable: %s', (errno, code) => {
    expect(isDatabaseUnavailable(wrapped(errno, code))).toBe(true);
    expect(isDatabaseUnavailable({ errno, code })).toBe(true);
    expect(isDeadlock(wrapped(errno, code))).toBe(false);
  });

  it.each([
    [1213, 'ER_LOCK_DEADLOCK'],
    [3101, 'ER_TRANSACTION_ROLLBACK_DURING_COMMIT'],
  ])('should run again a transaction rolled back with %i (%s)', (errno, code) => {
    expect(isDeadlock(wrapped(errno, code))).toBe(true);
    expect(isDatabaseUnavailable(wrapped(errno, code))).toBe(false);
  });

  it('should take other failures for what they are', () => {
    for (const error of [
      wrapped(1062, 'ER_DUP_ENTRY'),
      wrapped(1146, 'ER_NO_SUCH_TABLE'),
      new Error('boom'),
      null,
    ]) {
      expect(isDatabaseUnavailable(error)).toBe(false);
      expect(isDeadlock(error)).toBe(false);
    }
  });
});
