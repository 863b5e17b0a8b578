import {
  Table,
  TableForeignKey,
  TableIndex,
  type MigrationInterface,
  type QueryRunner,
} from 'typeorm';

/** Invitations to teams by e-mail address. */
export class TeamInvitations1764633600000 implements MigrationInterface {
  name = 'TeamInvitations1764633600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const sqlite = queryRunner.connection.driver.options.type === 'better-sqlite3';
    const charset = sqlite ? {} : { charset: 'utf8mb4', collation: 'utf8mb4_bin' };
    const datetime = (name: string, isNullable = true) => ({
      name,
      type: 'datetime',
      precision: 6,
      isNullable,
    });
    const userKey = (column: string, name: string) =>
      new TableForeignKey({
        name: `FK_team_invitations_${name}`,
        columnNames: [column],
        referencedTableName: 'users',
        referencedColumnNames: ['id'],
        onDelete: 'SET NULL',
        onUpdate: 'NO ACTION',
      });
    await queryRunner.createTable(
      new Table({
        name: 'team_invitations',
        columns: [
          {
            name: 'id',
            type: 'integer',
            isPrimary: true,
            isGenerated: true,
            generationStrategy: 'increment',
          },
          { name: 'team_id', type: 'integer' },
          { name: 'email', type: 'varchar', length: '255', ...charset },
          { name: 'role', type: 'varchar', length: '20' },
          { name: 'invited_by_id', type: 'integer', isNullable: true },
          { name: 'token_hash', type: 'varchar', length: '64', isNullable: true },
          { name: 'status', type: 'varchar', length: '10' },
          { name: 'claimed_by_id', type: 'integer', isNullable: true },
          datetime('expires_at', false),
          datetime('responded_at'),
          {
            name: 'created_at',
            type: 'datetime',
            precision: 6,
            default: sqlite ? "datetime('now')" : 'CURRENT_TIMESTAMP(6)',
          },
        ],
        indices: [
          new TableIndex({
            name: 'UQ_team_invitations_team_email',
            columnNames: ['team_id', 'email'],
            isUnique: true,
          }),
          new TableIndex({ name: 'IDX_team_invitations_email', columnNames: ['email'] }),
          new TableIndex({
            name: 'UQ_team_invitations_token_hash',
            columnNames: ['token_hash'],
            isUnique: true,
          }),
        ],
        foreignKeys: [
          new TableForeignKey({
            name: 'FK_team_invitations_team',
            columnNames: ['team_id'],
            referencedTableName: 'teams',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
            onUpdate: 'NO ACTION',
          }),
          userKey('invited_by_id', 'invited_by'),
          userKey('claimed_by_id', 'claimed_by'),
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('team_invitations');
  }
}
