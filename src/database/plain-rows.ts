import type { DataSource, EntityMetadata, EntityTarget, ObjectLiteral } from 'typeorm';

/**
 * Plain statements: what TypeORM's query builder would do for them, done once.
 *
 * For the few statements run on every request, where building a query with TypeORM's query
 * builder costs more than running it: the select list of an entity's columns under an alias
 * (`"u"."email" AS "u_email"`, …), and the entity made back from a row of them, each value
 * converted by the driver as the query builder converts it (times, booleans, simple arrays,
 * transformers).
 */
export function selectColumns(
  dataSource: DataSource,
  entity: EntityTarget<ObjectLiteral>,
  alias: string,
): string {
  const escape = (name: string) => dataSource.driver.escape(name);
  return layoutOf(dataSource.getMetadata(entity), alias)
    .columns.map(([c, key]) => `${escape(alias)}.${escape(c.databaseName)} AS ${escape(key)}`)
    .join(', ');
}

/** The entity whose columns `selectColumns` selected under `alias`; null when the row has none. */
export function entityOf<T extends ObjectLiteral>(
  dataSource: DataSource,
  entity: EntityTarget<T>,
  row: Record<string, unknown>,
  alias: string,
): T | null {
  const metadata = dataSource.getMetadata(entity);
  const { keys, columns } = layoutOf(metadata, alias);
  if (keys.every((key) => row[key] == null)) return null;
  const made = metadata.create() as T;
  for (const [column, key] of columns) {
    column.setEntityValue(made, dataSource.driver.prepareHydratedValue(row[key], column));
  }
  return made;
}

type ColumnMetadata = EntityMetadata['columns'][number];

interface Layout {
  /** The primary key's columns as a row names them. */
  keys: string[];
  /** The columns the entity stores (not a relation's key no property declares), with their names. */
  columns: [ColumnMetadata, string][];
}

/**
 * Each entity's columns and their names in a row under an alias, worked out once: a few
 * entities, each under the aliases the statements use.
 */
const layouts = new WeakMap<EntityMetadata, Map<string, Layout>>();

function layoutOf(metadata: EntityMetadata, alias: string): Layout {
  let byAlias = layouts.get(metadata);
  if (!byAlias) layouts.set(metadata, (byAlias = new Map()));
  let layout = byAlias.get(alias);
  if (!layout) {
    layout = {
      keys: metadata.primaryColumns.map((c) => `${alias}_${c.databaseName}`),
      columns: metadata.columns
        .filter((c) => !c.isVirtual)
        .map((c) => [c, `${alias}_${c.databaseName}`]),
    };
    byAlias.set(alias, layout);
  }
  return layout;
}

/** Dates come back from raw queries as Date objects (mysql2) or UTC text (SQLite). */
export function toDate(value: Date | string | null | undefined): Date | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value;
  return new Date(value.includes('T') ? value : `${value.replace(' ', 'T')}Z`);
}

/**
 * A time as a raw query's parameter: mysql2 writes Dates in UTC; on SQLite TypeORM keeps UTC
 * text with milliseconds, which compares as time does.
 */
export function toStoredTime(value: Date, sqlite: boolean): Date | string {
  return sqlite ? value.toISOString().replace('T', ' ').slice(0, 23) : value;
}
