import {
  DataSource,
  EventSubscriber,
  type DataSourceOptions,
  type EntitySubscriberInterface,
  type ObjectLiteral,
  type UpdateEvent,
} from 'typeorm';

/**
 * Every stored time has milliseconds, on both databases: the precision of a JavaScript `Date`,
 * and of the text TypeORM writes on SQLite. MySQL/MariaDB columns are DATETIME(3); SQLite
 * columns are declared datetime(3) and hold `YYYY-MM-DD HH:MM:SS.mmm`. Times the database
 * writes itself (a row's creation) have the same precision as times the app writes (an expiry),
 * so two of them compare as the times they are.
 */
export const TIME_PRECISION = 3;

/** The database's "now" with milliseconds, as column defaults and created rows use it. */
export const SQLITE_NOW = "strftime('%Y-%m-%d %H:%M:%f', 'now')";
export const MYSQL_NOW = `CURRENT_TIMESTAMP(${TIME_PRECISION})`;

/**
 * TypeORM's update builder sets an update-date column to `CURRENT_TIMESTAMP` (whole seconds on
 * both databases; a "todo" in its UpdateQueryBuilder) unless the update names it: this names
 * it, with the time `save()` would give it.
 */
@EventSubscriber()
export class UpdateDatesWithMilliseconds implements EntitySubscriberInterface {
  beforeUpdate(event: UpdateEvent<ObjectLiteral>): void {
    const column = event.metadata.updateDateColumn;
    if (!column || !event.entity) return;
    if (column.getEntityValue(event.entity) === undefined) {
      column.setEntityValue(event.entity, new Date());
    }
  }
}

/**
 * A data source for `options` (see buildDataSourceOptions) whose create and update dates have
 * milliseconds. TypeORM gives them CURRENT_TIMESTAMP(6) on MySQL and `datetime('now')`, whole
 * seconds, on SQLite (typeorm/typeorm#5002, #10139), with no option to say otherwise: the
 * driver's mapping is set here, before the entities' metadata is built from it. The app, the
 * command line, ormconfig.ts and the tests all make their data source here.
 */
export function createDataSource(options: DataSourceOptions): DataSource {
  const dataSource = new DataSource(options);
  const now = options.type === 'better-sqlite3' ? SQLITE_NOW : MYSQL_NOW;
  Object.assign(dataSource.driver.mappedDataTypes, {
    createDatePrecision: TIME_PRECISION,
    createDateDefault: now,
    updateDatePrecision: TIME_PRECISION,
    updateDateDefault: now,
  });
  return dataSource;
}
