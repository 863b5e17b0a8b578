import {
  TableColumn,
  TableForeignKey,
  TableIndex,
  type MigrationInterface,
  type QueryRunner,
} from 'typeorm';

/** A column added with a foreign key and its index, as both databases are given them. */
interface AddedReference {
  table: string;
  column: string;
  index: string;
  foreignKey: string;
  references: string;
  onDelete: 'CASCADE' | 'SET NULL';
  /** Further columns of the same table, as SQLite declares them (added in the same rebuild). */
  sqliteExtra: { column: string; declaration: string }[];
}

/**
 * Service accounts: an account owned by a team (`users.service_account_team_id`, deleted with
 * the team), which no one signs in to, with a description; how many a team has
 * (`teams.service_account_count`, counted up and down by the conditional updates that keep the
 * deployment's limit); and who made each token (`personal_access_tokens.created_by_id`, kept
 * null when that person's account is deleted), since a service account's tokens are made by
 * the team's owners and admins.
 */
export class ServiceAccounts1765584000000 implements MigrationInterface {
  name = 'ServiceAccounts1765584000000';

  private readonly references: AddedReference[] = [
    {
      table: 'users',
      column: 'service_account_team_id',
      index: 'IDX_users_service_account_team',
      foreignKey: 'FK_users_service_account_team',
      references: 'teams',
      onDelete: 'CASCADE',
      sqliteExtra: [{ column: 'description', declaration: '"description" varchar(500)' }],
    },
    {
      table: 'personal_access_tokens',
      column: 'created_by_id',
      index: 'IDX_personal_access_tokens_created_by',
      foreignKey: 'FK_personal_access_tokens_created_by',
      references: 'users',
      onDelete: 'SET NULL',
      sqliteExtra: [],
    },
  ];

  async up(queryRunner: QueryRunner): Promise<void> {
    if (isSqlite(queryRunner)) {
      await queryRunner.query(
        'ALTER TABLE "teams" ADD COLUMN "service_account_count" integer NOT NULL DEFAULT (0)',
      );
      // SQLite declares a named foreign key only with the table: the two tables are rebuilt.
      for (const ref of this.references) {
        const { columns, constraint } = sqliteAdditions(ref);
        await rebuildSqliteTable(queryRunner, ref.table, (sql) => {
          // Columns before the table's constraints, as SQLite's grammar wants; the key last.
          const at = sql.includes(', CONSTRAINT ') ? sql.indexOf(', CONSTRAINT ') : sql.length - 1;
          const withColumns = `${sql.slice(0, at)}, ${columns.join(', ')}${sql.slice(at)}`;
          return withColumns.replace(/\)$/, `, ${constraint})`);
        });
        await queryRunner.query(`CREATE INDEX "${ref.index}" ON "${ref.table}" ("${ref.column}")`);
      }
      return;
    }
    await queryRunner.addColumn(
      'teams',
      new TableColumn({ name: 'service_account_count', type: 'integer', default: 0 }),
    );
    await queryRunner.addColumn(
      'users',
      new TableColumn({
        name: 'description',
        type: 'varchar',
        length: '500',
        isNullable: true,
        charset: 'utf8mb4',
        collation: 'utf8mb4_bin',
      }),
    );
    for (const ref of this.references) {
      await queryRunner.addColumn(
        ref.table,
        new TableColumn({ name: ref.column, type: 'integer', isNullable: true }),
      );
      await queryRunner.createIndex(
        ref.table,
        new TableIndex({ name: ref.index, columnNames: [ref.column] }),
      );
      await queryRunner.createForeignKey(
        ref.table,
        new TableForeignKey({
          name: ref.foreignKey,
          columnNames: [ref.column],
          referencedTableName: ref.references,
          referencedColumnNames: ['id'],
          onDelete: ref.onDelete,
          onUpdate: 'NO ACTION',
        }),
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (isSqlite(queryRunner)) {
      for (const ref of [...this.references].reverse()) {
        await queryRunner.query(`DROP INDEX "${ref.index}"`);
        await rebuildSqliteTable(
          queryRunner,
          ref.table,
          (sql) => {
            const { columns, constraint } = sqliteAdditions(ref);
            return [...columns, constraint].reduce(
              (text, part) => text.replace(`, ${part}`, ''),
              sql,
            );
          },
          [ref.column, ...ref.sqliteExtra.map((extra) => extra.column)],
        );
      }
      await queryRunner.query('ALTER TABLE "teams" DROP COLUMN "service_account_count"');
      return;
    }
    for (const ref of [...this.references].reverse()) {
      await queryRunner.dropForeignKey(ref.table, ref.foreignKey);
      await queryRunner.dropIndex(ref.table, ref.index);
      await queryRunner.dropColumn(ref.table, ref.column);
    }
    await queryRunner.dropColumn('users', 'description');
    await queryRunner.dropColumn('teams', 'service_account_count');
  }
}

const isSqlite = (queryRunner: QueryRunner): boolean =>
  queryRunner.connection.driver.options.type === 'better-sqlite3';

/**
 * What the reference adds to SQLite's CREATE TABLE: its columns, then its foreign key as TypeORM
 * writes one there (so that TypeORM's schema check reads its name).
 */
function sqliteAdditions(ref: AddedReference): { columns: string[]; constraint: string } {
  return {
    columns: [`"${ref.column}" integer`, ...ref.sqliteExtra.map((extra) => extra.declaration)],
    constraint: `CONSTRAINT "${ref.foreignKey}" FOREIGN KEY ("${ref.column}") REFERENCES "${ref.references}" ("id") ON DELETE ${ref.onDelete} ON UPDATE NO ACTION`,
  };
}

/**
 * Rebuilds a SQLite table with the definition `change` makes of its CREATE TABLE, as SQLite's
 * manual describes (a new table, the rows of the columns both have copied, the old one dropped,
 * the new one renamed, its indexes made again), keeping its AUTOINCREMENT counter so no id is
 * handed out twice. Foreign keys must be off (the migrator does it): dropping the old table
 * would otherwise cascade to the rows that refer to it. `dropped`: the columns the new table
 * lacks, which are not copied.
 */
async function rebuildSqliteTable(
  queryRunner: QueryRunner,
  name: string,
  change: (sql: string) => string,
  dropped: string[] = [],
): Promise<void> {
  const [{ foreign_keys: enforced }] = await queryRunner.query('PRAGMA foreign_keys');
  if (Number(enforced) === 1) {
    throw new Error(
      'Rebuilding SQLite tables needs foreign keys off: run migrations with `npm run migration:run`',
    );
  }
  const [{ sql }]: { sql: string }[] = await queryRunner.query(
    `SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`,
    [name],
  );
  const indexes: { sql: string }[] = await queryRunner.query(
    `SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL`,
    [name],
  );
  const counter: { seq: number }[] = await queryRunner.query(
    'SELECT seq FROM sqlite_sequence WHERE name = ?',
    [name],
  );
  const columns: { name: string }[] = await queryRunner.query(
    'SELECT name FROM pragma_table_info(?)',
    [name],
  );
  const kept = columns
    .map((c) => c.name)
    .filter((c) => !dropped.includes(c))
    .map((c) => `"${c}"`)
    .join(', ');
  const rebuilt = `${name}__rebuilt`;
  await queryRunner.query(
    change(sql).replace(/^CREATE TABLE "[^"]+"/, `CREATE TABLE "${rebuilt}"`),
  );
  await queryRunner.query(`INSERT INTO "${rebuilt}" (${kept}) SELECT ${kept} FROM "${name}"`);
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
