import { isClusterNodeUnavailable, isTransactionConflict } from './cluster-errors.js';

interface DriverError {
  code?: string;
  errno?: number;
  driverError?: DriverError;
}

const UNIQUE_VIOLATION_CODES = new Set([
  'ER_DUP_ENTRY',
  'SQLITE_CONSTRAINT_UNIQUE',
  'SQLITE_CONSTRAINT_PRIMARYKEY',
]);

/**
 * Codes that mean the database could not be reached or gave no answer in time (a stall, a lock
 * held elsewhere past the wait the server allows), as opposed to a query that failed.
 */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'POOL_ACQUIRE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  'ER_LOCK_WAIT_TIMEOUT',
  // The table's AUTO-INC lock not had within the lock wait timeout: a lock wait as the above.
  'ER_AUTOINC_READ_FAILED',
  'ER_QUERY_TIMEOUT',
  'SQLITE_BUSY',
  'SQLITE_CANTOPEN',
  'SQLITE_IOERR',
]);

/**
 * Server errors mysql2 has no name for: MariaDB's max_statement_time (1969; MySQL's
 * MAX_EXECUTION_TIME is ER_QUERY_TIMEOUT above).
 */
const UNAVAILABLE_ERRNOS = new Set([1969]);

/** A row refers to one that is not there (the insert's or update's side of a foreign key). */
const MISSING_REFERENCE_CODES = new Set(['ER_NO_REFERENCED_ROW_2', 'ER_NO_REFERENCED_ROW']);
/** A row others refer to was to be deleted or changed (the referenced side). */
const STILL_REFERENCED_CODES = new Set(['ER_ROW_IS_REFERENCED_2', 'ER_ROW_IS_REFERENCED']);

function codeOf(error: unknown): string | undefined {
  const e = error as DriverError | null;
  return e?.driverError?.code ?? e?.code;
}

/** The server answered but refused us: no such database, wrong credentials. */
export function isDatabaseRefusal(error: unknown): boolean {
  return ['ER_BAD_DB_ERROR', 'ER_ACCESS_DENIED_ERROR', 'ER_DBACCESS_DENIED_ERROR'].includes(
    codeOf(error) ?? '',
  );
}

/** A unique index refused a row; with `column`, only when the message names that column. */
export function isUniqueViolation(error: unknown, column?: string): boolean {
  if (!UNIQUE_VIOLATION_CODES.has(codeOf(error) ?? '')) return false;
  return column === undefined || String((error as Error).message).includes(column);
}

export function isDatabaseUnavailable(error: unknown): boolean {
  const code = codeOf(error) ?? '';
  const e = error as DriverError | null;
  const errno = e?.driverError?.errno ?? e?.errno;
  return (
    UNAVAILABLE_CODES.has(code) ||
    code.startsWith('SQLITE_IOERR') ||
    (errno !== undefined && UNAVAILABLE_ERRNOS.has(errno)) ||
    isClusterNodeUnavailable(error)
  );
}

/**
 * Which side of a foreign key refused a write: `missing` (what it refers to is not there),
 * `referenced` (others still refer to it). SQLite does not say which; every foreign key in
 * Tessera's schema cascades or clears on delete, so there it is the missing side.
 */
export function foreignKeyViolation(error: unknown): 'missing' | 'referenced' | undefined {
  const code = codeOf(error) ?? '';
  if (MISSING_REFERENCE_CODES.has(code) || code === 'SQLITE_CONSTRAINT_FOREIGNKEY') {
    return 'missing';
  }
  return STILL_REFERENCED_CODES.has(code) ? 'referenced' : undefined;
}

/**
 * InnoDB chose this transaction as a deadlock's victim and rolled it back, or a cluster refused
 * it at commit because another node's conflicting write was certified first: running it again
 * is what MySQL's manual asks of every application.
 */
export function isDeadlock(error: unknown): boolean {
  return codeOf(error) === 'ER_LOCK_DEADLOCK' || isTransactionConflict(error);
}
