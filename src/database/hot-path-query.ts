import type { DataSource } from 'typeorm';

interface MysqlPool {
  execute(
    options: { sql: string; timeout: number },
    values: unknown[],
    callback: (error: Error | null, rows: unknown) => void,
  ): void;
}

interface SqliteConnection {
  prepare(sql: string): { get(...values: unknown[]): unknown };
}

/**
 * A one-row query for the request path, sent straight to the driver TypeORM already holds: a
 * prepared statement on MySQL/MariaDB (parsed once per connection) and on SQLite, without the
 * query runner, broadcaster and promise wrapper TypeORM puts around every query (together they
 * cost more Node CPU than the query itself; see docs/PERFORMANCE.md). The query still goes
 * through TypeORM's logger, and still has the query timeout.
 */
export function hotPathQuery<Row>(
  dataSource: DataSource,
  sql: string,
  timeoutMs: number,
): (...values: unknown[]) => Promise<Row | undefined> {
  const log = (values: unknown[]) => dataSource.logger.logQuery(sql, values);
  if (dataSource.options.type === 'better-sqlite3') {
    let statement: ReturnType<SqliteConnection['prepare']> | undefined;
    return async (...values) => {
      log(values);
      statement ??= (
        dataSource.driver as unknown as { databaseConnection: SqliteConnection }
      ).databaseConnection.prepare(sql);
      return statement.get(...values) as Row | undefined;
    };
  }
  const options = { sql, timeout: timeoutMs };
  return (...values) =>
    new Promise((resolve, reject) => {
      log(values);
      (dataSource.driver as unknown as { pool: MysqlPool }).pool.execute(
        options,
        values,
        (error, rows) => (error ? reject(error) : resolve((rows as Row[])[0])),
      );
    });
}
