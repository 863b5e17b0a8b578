import { domainToASCII } from 'node:url';
import { Logger } from '@nestjs/common';
import type { MigrationInterface, QueryRunner } from 'typeorm';

interface StoredUser {
  id: number;
  email: string;
  email_verified_at: string | Date | null;
}

interface StoredInvitation {
  id: number;
  team_id: number;
  email: string;
  status: string;
}

/** The columns' length: an address whose one form is longer (a long IDN domain) stays as it is. */
const EMAIL_MAX = 255;

/**
 * Stores every address in the one form sign-up and sign-in now use (`normalizeEmail`): composed
 * (NFC), lower-cased, with its domain in ASCII (`bücher.example` → `xn--bcher-kva.example`).
 * Until then one mailbox could hold an account per spelling.
 *
 * Where accounts shared a mailbox, the one whose address was confirmed first keeps it (it was
 * confirmed by mail to that mailbox), or the oldest when none was. Each other one moves to
 * `duplicate-<id>@accounts.invalid`, which receives no mail and cannot be registered: its
 * tokens and sessions go on, its password still signs in at that address, and the migration
 * logs its former address for an operator, once every change is made. Invitations one team made
 * to one mailbox keep the one still waiting, else the latest; the others go. An address whose
 * one form would not fit its column (a long international domain grows in ASCII) stays as it
 * is, and is logged.
 *
 * `down` changes nothing: the stored forms are addresses the earlier version accepts and
 * finds as stored, and the spellings they replace are not kept.
 */
export class OneFormOfEachAddress1765612800000 implements MigrationInterface {
  name = 'OneFormOfEachAddress1765612800000';

  private readonly logger = new Logger('Database');
  /** What an operator should know, logged once every change is made (none, if one fails). */
  private notes: string[] = [];

  async up(queryRunner: QueryRunner): Promise<void> {
    this.notes = [];
    await this.settleUsers(queryRunner);
    await this.settleInvitations(queryRunner);
    const links: { id: number; email: string }[] = await queryRunner.query(
      'SELECT id, email FROM account_tokens WHERE email IS NOT NULL',
    );
    for (const link of links) {
      const email = this.formOf(link.email, `The link ${link.id}`);
      if (email !== link.email) {
        await queryRunner.query('UPDATE account_tokens SET email = ? WHERE id = ?', [
          email,
          link.id,
        ]);
      }
    }
    for (const note of this.notes) this.logger.warn(note);
  }

  async down(): Promise<void> {
    // Nothing to undo in the schema; see the class's comment for the addresses.
  }

  private async settleUsers(queryRunner: QueryRunner): Promise<void> {
    const users: StoredUser[] = await queryRunner.query(
      'SELECT id, email, email_verified_at FROM users ORDER BY id',
    );
    const byForm = groupBy(users, (u) => this.formOf(u.email, `Account ${u.id}`));
    for (const [email, holders] of byForm) {
      const [keeper, ...others] = holders.sort(confirmedFirst);
      for (const other of others) {
        const moved = `duplicate-${other.id}@accounts.invalid`;
        await queryRunner.query('UPDATE users SET email = ? WHERE id = ?', [moved, other.id]);
        this.notes.push(
          `Account ${other.id} (${other.email}) shares a mailbox with account ${keeper.id}: its address is now ${moved}`,
        );
      }
      if (keeper.email !== email) {
        await queryRunner.query('UPDATE users SET email = ? WHERE id = ?', [email, keeper.id]);
      }
    }
  }

  private async settleInvitations(queryRunner: QueryRunner): Promise<void> {
    const invitations: StoredInvitation[] = await queryRunner.query(
      'SELECT id, team_id, email, status FROM team_invitations ORDER BY id DESC',
    );
    const byTeamAndAddress = groupBy(
      invitations,
      (i) => `${i.team_id} ${this.formOf(i.email, `The invitation ${i.id}`)}`,
    );
    for (const [key, group] of byTeamAndAddress) {
      // The one still waiting (at most one: one per team and address), else the latest.
      const kept = group.find((i) => i.status === 'pending') ?? group[0];
      for (const invitation of group.filter((i) => i !== kept)) {
        await queryRunner.query('DELETE FROM team_invitations WHERE id = ?', [invitation.id]);
      }
      const email = key.slice(key.indexOf(' ') + 1);
      if (email !== kept.email) {
        await queryRunner.query('UPDATE team_invitations SET email = ? WHERE id = ?', [
          email,
          kept.id,
        ]);
      }
    }
  }

  /** The address's one form, or the address as it is when that would not fit its column. */
  private formOf(email: string, what: string): string {
    const form = normalizeEmail(email);
    if (form.length <= EMAIL_MAX) return form;
    if (form !== email) {
      this.notes.push(`${what} keeps ${email}: in its one form it is longer than ${EMAIL_MAX}`);
    }
    return email;
  }
}

function groupBy<T>(rows: T[], key: (row: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const k = key(row);
    const group = groups.get(k);
    if (group) group.push(row);
    else groups.set(k, [row]);
  }
  return groups;
}

/** Confirmed before unconfirmed, earlier confirmation first, then the older account. */
function confirmedFirst(a: StoredUser, b: StoredUser): number {
  const at = (u: StoredUser): number =>
    u.email_verified_at === null ? Infinity : new Date(u.email_verified_at).getTime();
  return at(a) - at(b) || a.id - b.id;
}

/**
 * The one form of an address, as `normalizeEmail` (users/email.ts) gives it when this migration
 * was written: a migration keeps what it did, whatever the app's code becomes.
 */
function normalizeEmail(email: string): string {
  const address = email.trim().toLowerCase().normalize('NFC');
  const at = address.lastIndexOf('@');
  if (at < 0) return address;
  const domain = domainToASCII(address.slice(at + 1));
  return domain === '' ? address : `${address.slice(0, at + 1)}${domain}`;
}
