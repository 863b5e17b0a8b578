import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Passkeys (WebAuthn credentials), the random user handle each person's passkeys carry, and the
 * challenges handed out for them: single use, bound to the session that asked, short-lived.
 */
export class Passkeys1765065600000 implements MigrationInterface {
  name = 'Passkeys1765065600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const sqlite = queryRunner.connection.driver.options.type === 'better-sqlite3';
    const charset = sqlite ? {} : { charset: 'utf8mb4', collation: 'utf8mb4_bin' };
    const text = (name: string, length: number, isNullable = false) => ({
      name,
      type: 'varchar',
      length: String(length),
      isNullable,
      ...charset,
    });
    const user = (name: string) => ({
      name,
      columnNames: ['user_id'],
      referencedTableName: 'users',
      referencedColumnNames: ['id'],
      onDelete: 'CASCADE',
      onUpdate: 'NO ACTION',
    });

    await queryRunner.createTable(
      new Table({
        name: 'passkey_user_handles',
        columns: [{ name: 'user_id', type: 'integer', isPrimary: true }, text('handle', 64)],
        indices: [
          { name: 'UQ_passkey_user_handles_handle', columnNames: ['handle'], isUnique: true },
        ],
        foreignKeys: [user('FK_passkey_user_handles_user')],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'passkeys',
        columns: [
          {
            name: 'id',
            type: 'integer',
            isPrimary: true,
            isGenerated: true,
            generationStrategy: 'increment',
          },
          { name: 'user_id', type: 'integer' },
          text('credential_id', 255),
          { name: 'public_key', type: 'text', ...charset },
          { name: 'counter', type: 'bigint', default: 0 },
          text('transports', 255, true),
          text('device_type', 32),
          { name: 'backed_up', type: 'boolean', default: 0 },
          text('aaguid', 36, true),
          text('name', 100),
          {
            name: 'created_at',
            type: 'datetime',
            precision: 6,
            default: sqlite ? "datetime('now')" : 'CURRENT_TIMESTAMP(6)',
          },
          { name: 'last_used_at', type: 'datetime', precision: 6, isNullable: true },
        ],
        indices: [
          { name: 'UQ_passkeys_credential', columnNames: ['credential_id'], isUnique: true },
          { name: 'IDX_passkeys_user', columnNames: ['user_id'] },
        ],
        foreignKeys: [user('FK_passkeys_user')],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'passkey_challenges',
        columns: [
          { ...text('challenge', 64), isPrimary: true },
          text('session_handle', 64),
          text('purpose', 16),
          { name: 'user_id', type: 'integer', isNullable: true },
          { name: 'expires_at', type: 'datetime', precision: 6 },
        ],
        indices: [
          {
            name: 'IDX_passkey_challenges_session',
            columnNames: ['session_handle', 'purpose'],
          },
          { name: 'IDX_passkey_challenges_expiry', columnNames: ['expires_at'] },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('passkey_challenges');
    await queryRunner.dropTable('passkeys');
    await queryRunner.dropTable('passkey_user_handles');
  }
}
