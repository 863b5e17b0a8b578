import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The lifetime a token's person chose for its current value, in whole days (`lifetime_days`;
 * null when it never expires): what a team's maximum is compared with, rather than two stored
 * times. Tokens made before it get the whole days their stamps span, less a second: a creation
 * was stored in whole seconds on SQLite, and by the database's clock on MySQL/MariaDB, so a token
 * made for 30 days spans up to a second more (or a little less) and gets 30; one made for a date
 * gets the days from its creation's day to that date, as the form counted them.
 */
export class TokenLifetimeDays1765238400000 implements MigrationInterface {
  name = 'TokenLifetimeDays1765238400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const sqlite = queryRunner.connection.driver.options.type === 'better-sqlite3';
    // SQLite adds the column in place, as it does every column since the token lifecycle's.
    if (sqlite) {
      await queryRunner.query(
        'ALTER TABLE "personal_access_tokens" ADD COLUMN "lifetime_days" integer',
      );
    } else {
      await queryRunner.addColumn(
        'personal_access_tokens',
        new TableColumn({ name: 'lifetime_days', type: 'integer', isNullable: true }),
      );
    }
    const started = 'COALESCE(regenerated_at, created_at)';
    const days = sqlite
      ? ceilingOnSqlite(`(julianday(expires_at) - julianday(${started}) - 1.0 / 86400)`)
      : `CEIL((TIMESTAMPDIFF(MICROSECOND, ${started}, expires_at) - 1000000) / 86400000000)`;
    await queryRunner.query(
      `UPDATE personal_access_tokens SET lifetime_days = ${days} WHERE expires_at IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.driver.options.type === 'better-sqlite3') {
      await queryRunner.query('ALTER TABLE "personal_access_tokens" DROP COLUMN "lifetime_days"');
    } else {
      await queryRunner.dropColumn('personal_access_tokens', 'lifetime_days');
    }
  }
}

/** CEIL(x) for SQLite builds without its math functions. */
function ceilingOnSqlite(x: string): string {
  return `(CAST(${x} AS INTEGER) + (${x} > CAST(${x} AS INTEGER)))`;
}
