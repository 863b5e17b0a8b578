import { TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Mail waiting for one address, by kind: a change of password withdraws the reset mail not sent
 * yet (`Mailer.withdraw`), and without this index that update would read, and on MySQL/MariaDB
 * lock until its commit, every pending message of every address.
 */
export class MailOutboxByRecipient1765616400000 implements MigrationInterface {
  name = 'MailOutboxByRecipient1765616400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createIndex(
      'mail_outbox',
      new TableIndex({ name: 'IDX_mail_outbox_recipient', columnNames: ['recipient', 'kind'] }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropIndex('mail_outbox', 'IDX_mail_outbox_recipient');
  }
}
