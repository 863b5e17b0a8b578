import {
  Table,
  TableForeignKey,
  TableIndex,
  type MigrationInterface,
  type QueryRunner,
  type TableColumnOptions,
} from 'typeorm';

/** Written with TypeORM's Table API so that this one file runs on MySQL/MariaDB and SQLite. */
export class InitialSchema1763798400000 implements MigrationInterface {
  name = 'InitialSchema1763798400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const c = columns(queryRunner);

    await queryRunner.createTable(
      new Table({
        name: 'users',
        columns: [
          c.id(),
          c.text('name', 255),
          c.text('email', 255),
          { ...c.text('password_hash', 255), isNullable: true },
          { name: 'current_team_id', type: 'integer', isNullable: true },
          c.createdAt(),
          c.updatedAt(),
        ],
        indices: [
          new TableIndex({ name: 'UQ_users_email', columnNames: ['email'], isUnique: true }),
        ],
      }),
    );

    await queryRunner.createTable(
      new Table({
        name: 'teams',
        columns: [
          c.id(),
          c.text('name', 255),
          c.text('slug', 100),
          { name: 'owner_id', type: 'integer' },
          { name: 'personal', type: 'boolean', default: 0 },
          c.createdAt(),
          c.updatedAt(),
        ],
        indices: [
          new TableIndex({ name: 'UQ_teams_slug', columnNames: ['slug'], isUnique: true }),
          new TableIndex({ name: 'IDX_teams_owner', columnNames: ['owner_id'] }),
        ],
        foreignKeys: [
          new TableForeignKey({
            name: 'FK_teams_owner',
            columnNames: ['owner_id'],
            referencedTableName: 'users',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          }),
        ],
      }),
    );

    // users and teams point at each other: the second foreign key comes once both exist.
    await queryRunner.createForeignKey(
      'users',
      new TableForeignKey({
        name: 'FK_users_current_team',
        columnNames: ['current_team_id'],
        referencedTableName: 'teams',
        referencedColumnNames: ['id'],
        onDelete: 'SET NULL',
        onUpdate: 'NO ACTION',
      }),
    );

    await queryRunner.createTable(
      new Table({
        name: 'team_members',
        columns: [
          { name: 'team_id', type: 'integer', isPrimary: true },
          { name: 'user_id', type: 'integer', isPrimary: true },
          c.text('role', 20),
          c.createdAt(),
        ],
        indices: [new TableIndex({ name: 'IDX_team_members_user', columnNames: ['user_id'] })],
        foreignKeys: [
          new TableForeignKey({
            name: 'FK_team_members_team',
            columnNames: ['team_id'],
            referencedTableName: 'teams',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          }),
          new TableForeignKey({
            name: 'FK_team_members_user',
            columnNames: ['user_id'],
            referencedTableName: 'users',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          }),
        ],
      }),
    );

    await queryRunner.createTable(
      new Table({
        name: 'personal_access_tokens',
        columns: [
          c.id(),
          { name: 'user_id', type: 'integer' },
          c.text('name', 255),
          { name: 'token_hash', type: 'varchar', length: '64' },
          { name: 'last_four', type: 'varchar', length: '4' },
          { name: 'abilities', type: 'text' },
          c.datetime('expires_at'),
          c.datetime('last_used_at'),
          c.datetime('revoked_at'),
          c.createdAt(),
        ],
        indices: [
          new TableIndex({
            name: 'UQ_personal_access_tokens_hash',
            columnNames: ['token_hash'],
            isUnique: true,
          }),
          new TableIndex({ name: 'IDX_personal_access_tokens_user', columnNames: ['user_id'] }),
        ],
        foreignKeys: [
          new TableForeignKey({
            name: 'FK_personal_access_tokens_user',
            columnNames: ['user_id'],
            referencedTableName: 'users',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          }),
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('personal_access_tokens');
    await queryRunner.dropTable('team_members');
    await queryRunner.dropForeignKey('users', 'FK_users_current_team');
    await queryRunner.dropTable('teams');
    await queryRunner.dropTable('users');
  }
}

/** Column shapes shared by the tables; the only dialect difference is the clock expression. */
function columns(queryRunner: QueryRunner) {
  const sqlite = queryRunner.connection.driver.options.type === 'better-sqlite3';
  // The same defaults TypeORM gives create/update date columns, so the entities match.
  const now = sqlite ? "datetime('now')" : 'CURRENT_TIMESTAMP(6)';
  // utf8mb4 per column, so 4-byte characters are kept even in a database created as latin1;
  // binary collation, so text compares exactly as on SQLite (zoë is not zoe, Acme is not acme).
  const charset = sqlite ? {} : { charset: 'utf8mb4', collation: 'utf8mb4_bin' };
  return {
    id: (): TableColumnOptions => ({
      name: 'id',
      type: 'integer',
      isPrimary: true,
      isGenerated: true,
      generationStrategy: 'increment',
    }),
    text: (name: string, length: number): TableColumnOptions => ({
      name,
      type: 'varchar',
      length: String(length),
      ...charset,
    }),
    datetime: (name: string): TableColumnOptions => ({
      name,
      type: 'datetime',
      precision: 6,
      isNullable: true,
    }),
    createdAt: (): TableColumnOptions => ({
      name: 'created_at',
      type: 'datetime',
      precision: 6,
      default: now,
    }),
    updatedAt: (): TableColumnOptions => ({
      name: 'updated_at',
      type: 'datetime',
      precision: 6,
      default: now,
      onUpdate: sqlite ? undefined : 'CURRENT_TIMESTAMP(6)',
    }),
  };
}
