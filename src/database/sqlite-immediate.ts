import type { DataSource, EntityManager } from 'typeorm';

/**
 * Runs work in a `BEGIN IMMEDIATE` transaction on TypeORM's one SQLite connection. TypeORM
 * opens deferred transactions, and two processes on one file that both read and then write
 * refuse each other at once ("database is locked") instead of waiting; IMMEDIATE takes the
 * write lock first, so the second waits its busy timeout. TypeORM has no option for it, so
 * the runner is told about the transaction it is in (see typeorm/typeorm#1884 on SQLite's
 * single shared connection).
 */
export async function inImmediateTransaction<T>(
  dataSource: DataSource,
  work: (manager: EntityManager) => Promise<T>,
): Promise<T> {
  const runner = dataSource.createQueryRunner();
  await runner.query('BEGIN IMMEDIATE');
  Object.assign(runner, { isTransactionActive: true, transactionDepth: 1 });
  try {
    const result = await work(runner.manager);
    await runner.commitTransaction();
    return result;
  } catch (error) {
    await runner.rollbackTransaction();
    throw error;
  }
}
