import type { MigrationInterface, QueryRunner } from 'typeorm';

type Precision = 3 | 6;

/**
 * Every stored time with milliseconds, on both databases. Times were DATETIME(6) on MySQL and
 * MariaDB, with microseconds where the database wrote them (a row's creation) and milliseconds
 * where the app did (an expiry: a JavaScript Date has no more); on SQLite a creation was written
 * in whole seconds (`datetime('now')`) and an expiry with milliseconds. So a token made to live
 * exactly 30 days looked a fraction of a second longer than 30 days.
 *
 * Milliseconds rather than whole seconds: they are what the app's times carry, rounding nothing
 * the app writes, and what orders events of the same second (the security log, attempts, a
 * grace period's end). MySQL/MariaDB: every datetime column becomes DATETIME(3), creation and
 * update defaults CURRENT_TIMESTAMP(3), in one ALTER per table (each copies its table once).
 * SQLite: each table with such a column is rebuilt with them declared datetime(3) and defaults
 * that keep milliseconds, and every stored time is rewritten as `YYYY-MM-DD HH:MM:SS.mmm`, the
 * form TypeORM writes, so times compare as text as they do as times. Undone, the columns are
 * DATETIME(6) and `datetime('now')` again; the times keep their milliseconds.
 */
export class MillisecondTimes1765152000000 implements MigrationInterface {
  name = 'MillisecondTimes1765152000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (isSqlite(queryRunner)) {
      await rebuildSqliteTables(queryRunner, 3);
      await rewriteSqliteTimes(queryRunner);
    } else {
      await alterMysqlColumns(queryRunner, 3);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (isSqlite(queryRunner)) await rebuildSqliteTables(queryRunner, 6);
    else await alterMysqlColumns(queryRunner, 6);
  }
}

const isSqlite = (queryRunner: QueryRunner): boolean =>
  queryRunner.connection.driver.options.type === 'better-sqlite3';

interface MysqlColumn {
  table: string;
  column: string;
  nullable: boolean;
  /** The default is the current time (creation and update dates). */
  defaultNow: boolean;
  onUpdateNow: boolean;
}

/** Every datetime column of the database, table by table, with one ALTER TABLE each. */
async function alterMysqlColumns(queryRunner: QueryRunner, precision: Precision): Promise<void> {
  const rows: Record<string, string | null>[] = await queryRunner.query(
    `SELECT TABLE_NAME AS t, COLUMN_NAME AS c, IS_NULLABLE AS n, COLUMN_DEFAULT AS d, EXTRA AS e
       FROM information_schema.COLUMNS
      WHERE TABLE_SCHEMA = DATABASE() AND DATA_TYPE = 'datetime'
      ORDER BY TABLE_NAME, ORDINAL_POSITION`,
  );
  const columns: MysqlColumn[] = rows.map((row) => ({
    table: row.t!,
    column: row.c!,
    nullable: row.n === 'YES',
    defaultNow: /^current_timestamp/i.test(row.d ?? ''),
    onUpdateNow: /on update current_timestamp/i.test(row.e ?? ''),
  }));
  const now = `CURRENT_TIMESTAMP(${precision})`;
  for (const table of new Set(columns.map((c) => c.table))) {
    const changes = columns
      .filter((c) => c.table === table)
      .map(
        (c) =>
          `MODIFY \`${c.column}\` datetime(${precision}) ${c.nullable ? 'NULL' : 'NOT NULL'}` +
          (c.defaultNow ? ` DEFAULT ${now}` : '') +
          (c.onUpdateNow ? ` ON UPDATE ${now}` : ''),
      );
    await queryRunner.query(`ALTER TABLE \`${table}\` ${changes.join(', ')}`);
  }
}

const SQLITE_NOW: Record<Precision, string> = {
  3: "strftime('%Y-%m-%d %H:%M:%f', 'now')",
  6: "datetime('now')",
};

/**
 * Rebuilds each table that declares a datetime column of the other precision, as SQLite's manual
 * describes (a new table, the rows copied, the old one dropped, the new one renamed, its indexes
 * made again), keeping its AUTOINCREMENT counter so no id is handed out twice. Foreign keys must
 * be off (the migrator does it): dropping the old table would otherwise cascade to the rows that
 * refer to it.
 */
async function rebuildSqliteTables(queryRunner: QueryRunner, precision: Precision): Promise<void> {
  const [{ foreign_keys: enforced }] = await queryRunner.query('PRAGMA foreign_keys');
  if (Number(enforced) === 1) {
    throw new Error(
      'Rebuilding SQLite tables needs foreign keys off: run migrations with `npm run migration:run`',
    );
  }
  const other: Precision = precision === 3 ? 6 : 3;
  const tables: { name: string; sql: string }[] = await queryRunner.query(
    `SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql LIKE ?`,
    [`%datetime(${other})%`],
  );
  for (const { name, sql } of tables) {
    const indexes: { sql: string }[] = await queryRunner.query(
      `SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL`,
      [name],
    );
    const counter: { seq: number }[] = await queryRunner.query(
      'SELECT seq FROM sqlite_sequence WHERE name = ?',
      [name],
    );
    const rebuilt = `${name}__rebuilt`;
    const created = sql
      .replace(/^CREATE TABLE "[^"]+"/, `CREATE TABLE "${rebuilt}"`)
      .replaceAll(`datetime(${other})`, `datetime(${precision})`)
      .replaceAll(SQLITE_NOW[other], SQLITE_NOW[precision]);
    await queryRunner.query(created);
    await queryRunner.query(`INSERT INTO "${rebuilt}" SELECT * FROM "${name}"`);
    await queryRunner.query(`DROP TABLE "${name}"`);
    await queryRunner.query(`ALTER TABLE "${rebuilt}" RENAME TO "${name}"`);
    for (const index of indexes) await queryRunner.query(index.sql);
    if (counter.length > 0) {
      await queryRunner.query('UPDATE sqlite_sequence SET seq = ? WHERE name = ?', [
        counter[0].seq,
        name,
      ]);
    }
  }
}

/** Every stored time as `YYYY-MM-DD HH:MM:SS.mmm` (whole seconds gain `.000`). */
async function rewriteSqliteTimes(queryRunner: QueryRunner): Promise<void> {
  const tables: { name: string }[] = await queryRunner.query(
    `SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%datetime(3)%'`,
  );
  for (const { name } of tables) {
    const columns: { name: string; type: string }[] = await queryRunner.query(
      `SELECT name, type FROM pragma_table_info(?)`,
      [name],
    );
    const times = columns.filter((c) => c.type.toLowerCase() === 'datetime(3)');
    const set = times
      // A value SQLite cannot read as a time (none should be) is left as it is.
      .map((c) => `"${c.name}" = COALESCE(strftime('%Y-%m-%d %H:%M:%f', "${c.name}"), "${c.name}")`)
      .join(', ');
    await queryRunner.query(`UPDATE "${name}" SET ${set}`);
  }
}
