import { stdSerializers } from 'pino';

/** What an error may show in a log line; everything else it carries is left out. */
const KEPT = ['type', 'message', 'stack', 'code', 'errno', 'sqlState'] as const;

/**
 * pino's error serializer, narrowed: a database error carries the statement and its parameters
 * (`sql`, `parameters`, `driverError.sql`), which for an INSERT are the row itself: a password
 * hash, a token hash, an email. Only the type, message, stack and error codes are logged (pino
 * writes a cause's message and stack into those two).
 */
export function safeError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: String(error) };
  const full = stdSerializers.err(error) as unknown as Record<string, unknown>;
  const kept: Record<string, unknown> = {};
  for (const key of KEPT) if (full[key] !== undefined) kept[key] = full[key];
  return kept;
}
