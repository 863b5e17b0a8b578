import { AuditLog } from '../audit/audit-log.js';
import { UsersRepository } from '../users/users.repository.js';
import { Injectable } from '@nestjs/common';
import { AuthService } from '../auth/auth.service.js';
import { SessionsRepository } from '../auth/sessions.repository.js';
import { accountOf, type Actor } from '../common/actor.js';
import { NotFoundError } from '../common/errors/domain.error.js';
import { Transactions } from '../database/transactions.js';
import { sessionHandle } from '../auth/session-digests.js';
import { PasskeysService } from '../passkeys/passkeys.service.js';
import { toSessionView, type SessionView } from './session.view.js';
import { Clock } from '../clock/clock.js';

/** The browsers signed in to a person's account, and signing them out. */
@Injectable()
export class BrowserSessionsService {
  constructor(
    private readonly audit: AuditLog,
    private readonly sessions: SessionsRepository,
    private readonly auth: AuthService,
    private readonly passkeys: PasskeysService,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly users: UsersRepository,
  ) {}

  /** The account's live sessions, `currentId` (this browser's) marked and first. */
  async list(actor: Actor, currentId: string): Promise<SessionView[]> {
    const rows = await this.sessions.findLiveForUser(accountOf(actor), this.clock.now());
    const views = rows.map((row) => toSessionView(row, currentId));
    return [...views.filter((v) => v.current), ...views.filter((v) => !v.current)];
  }

  /**
   * Signs out the account's session named by `handle`; 404 for one that is not the account's,
   * and for this browser's own (signing out is how that one ends).
   */
  async revoke(actor: Actor, handle: string, currentId: string): Promise<void> {
    const userId = accountOf(actor);
    await this.transactions.run(async (m) => {
      const rows = await this.sessions.findLiveForUser(userId, this.clock.now(), m);
      const row = rows.find((r) => sessionHandle(r.id) === handle && r.id !== currentId);
      if (!row || !(await this.sessions.deleteForOwner(m, userId, row.id))) {
        throw new NotFoundError('session');
      }
      this.audit.recordIn(m, actor, {
        event: 'account.session_revoked',
        detail: { sessions: 1, signed_in_from: row.ip ?? 'unknown address' },
      });
    });
  }

  /**
   * Signs the account out everywhere but here, once the password is typed again; with
   * `removePasskeys`, the account's passkeys go too (each a way in that needs no password).
   */
  async revokeOthers(
    actor: Actor,
    password: string,
    currentId: string,
    removePasskeys = false,
  ): Promise<{ sessions: number; passkeys: number }> {
    await this.auth.confirmPassword(actor, password);
    return this.transactions.run(async (m) => {
      // The account's row first, as a reset and adding a passkey take it: a passkey added from a
      // session ended here waits, then finds its session gone.
      await this.users.lockForUpdate(m, accountOf(actor));
      const sessions = await this.sessions.deleteOthersForUser(m, accountOf(actor), currentId);
      const passkeys = removePasskeys
        ? await this.passkeys.removeAll(m, actor, 'signed out everywhere else', { notify: true })
        : 0;
      if (sessions > 0) {
        this.audit.recordIn(m, actor, {
          event: 'account.session_revoked',
          detail: { sessions, ...(removePasskeys ? { passkeys_removed: passkeys } : {}) },
        });
      }
      return { sessions, passkeys };
    });
  }
}
