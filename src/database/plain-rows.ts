import type { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';

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
  return storedColumns(dataSource, entity)
    .map(
      (c) =>
        `${escape(alias)}.${escape(c.databaseName)} AS ${escape(`${alias}_${c.databaseName}`)}`,
    )
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
  if (metadata.primaryColumns.every((c) => row[`${alias}_${c.databaseName}`] == null)) return null;
  const made = metadata.create() as T;
  for (const column of storedColumns(dataSource, entity)) {
    const value = row[`${alias}_${column.databaseName}`];
    column.setEntityValue(made, dataSource.driver.prepareHydratedValue(value, column));
  }
  return made;
}

/** The columns an entity stores (not a relation's key that no property declares). */
function storedColumns(dataSource: DataSource, entity: EntityTarget<ObjectLiteral>) {
  return dataSource.getMetadata(entity).columns.filter((c) => !c.isVirtual);
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
