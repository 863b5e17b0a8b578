import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

type NewColumn = { table: string; name: string; sql: string; column: TableColumn };

/**
 * What the account settings pages need: each session's browser, address and last activity (for
 * the list of signed-in sessions), and the address a mailed e-mail change link is for.
 */
export class AccountSettings1764806400000 implements MigrationInterface {
  name = 'AccountSettings1764806400000';

  private columns(queryRunner: QueryRunner): NewColumn[] {
    const sqlite = queryRunner.connection.driver.options.type === 'better-sqlite3';
    const charset = sqlite ? {} : { charset: 'utf8mb4', collation: 'utf8mb4_bin' };
    const text = (name: string, length: number) =>
      new TableColumn({
        name,
        type: 'varchar',
        length: String(length),
        isNullable: true,
        ...charset,
      });
    return [
      {
        table: 'sessions',
        name: 'user_agent',
        sql: 'varchar(255)',
        column: text('user_agent', 255),
      },
      { table: 'sessions', name: 'ip', sql: 'varchar(45)', column: text('ip', 45) },
      {
        table: 'sessions',
        name: 'last_active_at',
        sql: 'datetime(6)',
        column: new TableColumn({
          name: 'last_active_at',
          type: 'datetime',
          precision: 6,
          isNullable: true,
        }),
      },
      { table: 'account_tokens', name: 'email', sql: 'varchar(255)', column: text('email', 255) },
    ];
  }

  async up(queryRunner: QueryRunner): Promise<void> {
    const sqlite = queryRunner.connection.driver.options.type === 'better-sqlite3';
    for (const { table, name, sql, column } of this.columns(queryRunner)) {
      // TypeORM adds a column on SQLite by copying the table and dropping the old one, which
      // inside BEGIN IMMEDIATE would cascade through the foreign keys: SQLite adds it in place.
      if (sqlite) await queryRunner.query(`ALTER TABLE "${table}" ADD COLUMN "${name}" ${sql}`);
      else await queryRunner.addColumn(table, column);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const sqlite = queryRunner.connection.driver.options.type === 'better-sqlite3';
    for (const { table, name } of this.columns(queryRunner).reverse()) {
      if (sqlite) await queryRunner.query(`ALTER TABLE "${table}" DROP COLUMN "${name}"`);
      else await queryRunner.dropColumn(table, name);
    }
  }
}
