import type {
  DataSource,
  MigrationInterface,
  QueryRunner,
  Table,
  TableColumn,
  TableForeignKey,
  TableIndex,
} from 'typeorm';

type TableRef = Table | string;

const nameOf = (ref: { name?: string } | string): string | undefined =>
  typeof ref === 'string' ? ref : ref.name;
const tableName = (ref: TableRef): string => nameOf(ref)!;
const sameColumns = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((column, i) => column === b[i]);

/**
 * A migration's query runner whose schema changes are made only where they are not made yet:
 * a column added once, a table or index created once, a drop of what is gone already skipped.
 *
 * MySQL and MariaDB commit each schema change as it is made (a DDL statement is no part of the
 * migration's transaction). A process stopped half-way through a migration (killed, its node
 * lost) leaves the changes made so far and no row saying the migration ran; whoever takes the
 * migration lock over runs it again, from the start. With this runner that run goes past what
 * was made and finishes the rest, where plain DDL would stop at the first change made already
 * ("Duplicate column name") and keep every instance from starting. What is there already must
 * be what the migration makes (a column's type and nullability, an index's columns and
 * uniqueness, a foreign key's columns and target), else the run stops and says so. Covered:
 * adding and dropping columns, tables, indexes and foreign keys one at a time; `changeColumn`
 * is safe to run again as it is. Anything else a migration does (renames, `createIndices`,
 * statements sent as text) goes as it is and must be safe to send twice (a back-fill of derived
 * values, a column changed to the type it has).
 */
export function resumableRunner(runner: QueryRunner): QueryRunner {
  const table = (ref: TableRef) => runner.getTable(tableName(ref));
  /** Whether the column is there; one of that name but another type or nullability is an error. */
  const hasColumn = async (ref: TableRef, column: TableColumn | string): Promise<boolean> => {
    const existing = (await table(ref))?.findColumnByName(nameOf(column)!);
    if (!existing) return false;
    if (typeof column !== 'string') {
      const driver = runner.connection.driver;
      const wanted = driver.normalizeType(column);
      const found = driver.normalizeType(existing);
      if (wanted !== found || Boolean(column.isNullable) !== Boolean(existing.isNullable)) {
        throw differs(
          ref,
          `column ${column.name}`,
          `${found}${existing.isNullable ? ' null' : ''}`,
        );
      }
    }
    return true;
  };
  /** Whether the index is there; one of that name on other columns is an error. */
  const hasIndex = async (ref: TableRef, index: TableIndex | string): Promise<boolean> => {
    const found = await table(ref);
    if (!found) return false;
    const name = nameOf(index);
    const columns = typeof index === 'string' ? undefined : index.columnNames;
    const existing = [...found.indices, ...found.uniques].find((i) =>
      name ? i.name === name : sameColumns(i.columnNames, columns ?? []),
    );
    if (existing && typeof index !== 'string') {
      const unique = 'isUnique' in existing ? existing.isUnique : true;
      if (!sameColumns(existing.columnNames, index.columnNames) || unique !== index.isUnique) {
        throw differs(ref, `index ${name}`, existing.columnNames.join(', '));
      }
    }
    return existing !== undefined;
  };
  /** Whether the foreign key is there; one of that name referring elsewhere is an error. */
  const hasForeignKey = async (ref: TableRef, key: TableForeignKey | string): Promise<boolean> => {
    const found = await table(ref);
    if (!found) return false;
    const name = nameOf(key);
    const existing = found.foreignKeys.find((k) =>
      name
        ? k.name === name
        : typeof key !== 'string' && sameColumns(k.columnNames, key.columnNames),
    );
    if (existing && typeof key !== 'string') {
      const target = (t: string) => t.split('.').at(-1);
      if (
        !sameColumns(existing.columnNames, key.columnNames) ||
        target(existing.referencedTableName) !== target(key.referencedTableName) ||
        !sameColumns(existing.referencedColumnNames, key.referencedColumnNames)
      ) {
        throw differs(ref, `foreign key ${name}`, existing.referencedTableName);
      }
    }
    return existing !== undefined;
  };
  const missing = async <T extends TableColumn | string>(ref: TableRef, columns: T[]) => {
    const found: T[] = [];
    for (const column of columns) if (!(await hasColumn(ref, column))) found.push(column);
    return found;
  };
  /** Those of `columns` there to drop, by name: what they were made as does not matter. */
  const present = async <T extends TableColumn | string>(ref: TableRef, columns: T[]) => {
    const kept: T[] = [];
    for (const column of columns) if (await hasColumn(ref, nameOf(column)!)) kept.push(column);
    return kept;
  };

  const steps: Partial<Record<keyof QueryRunner, (...args: never[]) => Promise<void>>> = {
    addColumn: async (ref: TableRef, column: TableColumn) => {
      if (!(await hasColumn(ref, column))) await runner.addColumn(ref, column);
    },
    addColumns: async (ref: TableRef, columns: TableColumn[]) => {
      const added = await missing(ref, columns);
      if (added.length > 0) await runner.addColumns(ref, added);
    },
    createTable: async (
      created: Table,
      _ifNotExist?: boolean,
      keys?: boolean,
      indices?: boolean,
    ) => {
      if (!(await table(created))) return runner.createTable(created, false, keys, indices);
      // There already (made in one statement, indexes and foreign keys with it): it must be the
      // table the migration makes, not another of that name.
      for (const column of created.columns) {
        if (!(await hasColumn(created, column))) {
          throw new Error(
            `${created.name} is there already, unlike the table this migration makes (it has no column ${column.name}): make it as the migration does, or remove it, then start again`,
          );
        }
      }
    },
    createIndex: async (ref: TableRef, index: TableIndex) => {
      if (!(await hasIndex(ref, index))) await runner.createIndex(ref, index);
    },
    createForeignKey: async (ref: TableRef, key: TableForeignKey) => {
      if (!(await hasForeignKey(ref, key))) await runner.createForeignKey(ref, key);
    },
    dropColumn: async (ref: TableRef, column: TableColumn | string) => {
      if (await hasColumn(ref, nameOf(column)!)) await runner.dropColumn(ref, column);
    },
    dropColumns: async (ref: TableRef, columns: TableColumn[] | string[]) => {
      const dropped = await present<TableColumn | string>(ref, columns);
      if (dropped.length > 0) await runner.dropColumns(ref, dropped as TableColumn[]);
    },
    dropIndex: async (ref: TableRef, index: TableIndex | string) => {
      if (await hasIndex(ref, nameOf(index) ?? index)) await runner.dropIndex(ref, index);
    },
    dropForeignKey: async (ref: TableRef, key: TableForeignKey | string) => {
      if (await hasForeignKey(ref, nameOf(key) ?? key)) await runner.dropForeignKey(ref, key);
    },
    dropTable: async (ref: TableRef, _ifExist?: boolean, keys?: boolean, indices?: boolean) =>
      runner.dropTable(ref, true, keys, indices),
  };

  return new Proxy(runner, {
    get(target, property, receiver) {
      const step = steps[property as keyof QueryRunner];
      if (step) return step;
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function'
        ? (value as (...a: unknown[]) => unknown).bind(target)
        : value;
    },
  });
}

/**
 * Something of the name a migration makes is there already but is not what it makes: left by
 * hand, or by another version of the migration. Skipping it would leave the schema other than
 * the entities say, so the migration stops and says what to look at.
 */
function differs(ref: TableRef, what: string, found: string): Error {
  return new Error(
    `${tableName(ref)} has a ${what} already, unlike the one this migration makes (${found}): make it as the migration does, or remove it, then start again`,
  );
}

const resumed = new WeakSet<MigrationInterface>();

/**
 * Makes the data source's migrations run, and undo, through `resumableRunner` (MySQL and
 * MariaDB: SQLite changes its schema in the migration's transaction, all or nothing).
 */
export function makeMigrationsResumable(dataSource: DataSource): void {
  for (const migration of dataSource.migrations) {
    if (resumed.has(migration)) continue;
    resumed.add(migration);
    const up = migration.up.bind(migration);
    const down = migration.down.bind(migration);
    migration.up = (runner) => up(resumableRunner(runner));
    migration.down = (runner) => down(resumableRunner(runner));
  }
}
