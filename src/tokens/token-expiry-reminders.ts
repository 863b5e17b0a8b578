import { Actors } from '../common/actor.js';
import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { Transactions } from '../database/transactions.js';
import type { MailMessage } from '../mail/mail-message.js';
import { ComposesMail, Mailer } from '../mail/mailer.js';
import { UsersRepository } from '../users/users.repository.js';
import { TokensRepository, type TeamManager } from './tokens.repository.js';
import { serviceAccountPath } from './token-notices.js';
import { Clock } from '../clock/clock.js';

export const TOKEN_EXPIRY_MAIL = 'token-expiry';

const DAY_MS = 86_400_000;
/** Tokens handled per statement; a run goes on until none is left. */
const BATCH = 200;

/**
 * What each step of `expiry_notices` means, in order: a reminder a week before, one on the
 * day (within the last 24 hours), and the expiry itself, recorded in the security log. A
 * reminder comes only in the second half of a token's life (`remindsOf`).
 */
export const EXPIRY_STEPS = [
  { notice: 1, lead: 7 * DAY_MS, mail: 'week' },
  { notice: 2, lead: DAY_MS, mail: 'day' },
  { notice: 3, lead: 0, mail: null },
] as const;

/**
 * Whether a reminder `leadMs` before the end is worth sending for a token that lives
 * `lifetimeMs`: only when, by then, it has lived at least as long as it has left. Its person chose
 * the lifetime when they made (or regenerated) it; a reminder in the first half of it tells them
 * only what they chose, and for a one-day token it came a minute after creation. A token long
 * enough to be forgotten still hears a week ahead (a 30-day token on its 23rd day) and on its
 * last day (a 2-day token on its second); a 7-day token hears only on its last day, and a 1-day
 * token not at all: it is over before a reminder could help.
 */
export function remindsOf(lifetimeMs: number, leadMs: number): boolean {
  return lifetimeMs >= 2 * leadMs;
}

export interface ExpiryRun {
  reminded: number;
  expired: number;
}

/**
 * Tells owners their tokens are about to expire, and records expiries in the security log,
 * each exactly once whatever the number of instances: a step is claimed by a conditional
 * UPDATE of the token's `expiry_notices` in the transaction that enqueues its mail, so of two
 * instances at once only one sees its UPDATE change the row. Run by a timer in the server
 * (TokenExpirySchedule) and by `npm run cli -- tokens:remind`.
 */
@Injectable()
export class TokenExpiryReminders {
  constructor(
    private readonly tokens: TokensRepository,
    private readonly users: UsersRepository,
    private readonly transactions: Transactions,
    private readonly mailer: Mailer,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  async run(): Promise<ExpiryRun> {
    const now = this.clock.now();
    const result: ExpiryRun = { reminded: 0, expired: 0 };
    // The later steps first: a token a day from expiry gets the day's reminder, not both.
    for (const step of [...EXPIRY_STEPS].reverse()) {
      const until = new Date(now.getTime() + step.lead);
      for (;;) {
        const due = await this.tokens.findExpiryDue(step.notice, until, BATCH);
        for (const token of due) {
          const claimed = await this.transactions.run(async (m) => {
            if (!(await this.tokens.claimExpiryNotice(m, token.id, step.notice, until))) {
              return false;
            }
            // The days chosen, when known: the stamps differ by the moments between them.
            const lifetime =
              token.lifetimeDays !== null
                ? token.lifetimeDays * DAY_MS
                : token.expiresAt.getTime() - token.startedAt.getTime();
            if (step.mail && remindsOf(lifetime, step.lead)) {
              const { teamId, recipients } = await this.recipientsOf(m, token.userId);
              for (const recipient of recipients) {
                await this.mailer.send(m, TOKEN_EXPIRY_MAIL, recipient.email, {
                  tokenId: token.id,
                  step: step.mail,
                  recipientId: recipient.id,
                });
              }
              if (recipients.length > 0) {
                // In this transaction: the webhook outbox writes `token.expiring` with it.
                this.audit.recordIn(m, Actors.system, {
                  event: 'token.expiry_reminded',
                  userId: token.userId,
                  teamId,
                  tokenId: token.id,
                  target: { type: 'token', id: token.id },
                  detail: { name: token.name, expires_at: token.expiresAt.toISOString() },
                });
                return true;
              }
            }
            if (!step.mail) {
              // A service account's token is its team's: `token.revoked` goes to its webhooks.
              const account = await this.tokens.findServiceAccountOwner(m, token.userId);
              this.audit.recordIn(m, Actors.system, {
                event: 'token.expired',
                userId: token.userId,
                teamId: account?.teamId ?? null,
                tokenId: token.id,
                target: { type: 'token', id: token.id },
                detail: { name: token.name },
                at: token.expiresAt,
              });
              return true;
            }
            return false;
          });
          if (claimed) result[step.mail ? 'reminded' : 'expired']++;
        }
        if (due.length < BATCH) break;
      }
    }
    return result;
  }

  /**
   * Whom a token's reminders go to: its person, or for a service account's token, the owners
   * and admins of its team (a service account reads no mail), and that team.
   */
  private async recipientsOf(
    m: EntityManager,
    userId: number,
  ): Promise<{ teamId: number | null; recipients: TeamManager[] }> {
    const account = await this.tokens.findServiceAccountOwner(m, userId);
    if (account) {
      return {
        teamId: account.teamId,
        recipients: await this.tokens.findTeamManagers(m, account.teamId),
      };
    }
    const user = await this.users.findById(userId, m);
    return { teamId: null, recipients: user ? [{ id: user.id, email: user.email }] : [] };
  }

  /** Made when sent: nothing once the token is revoked, regenerated past the reminder or gone. */
  @ComposesMail(TOKEN_EXPIRY_MAIL)
  private async compose(
    m: EntityManager,
    request: { to: string; params: Record<string, unknown> },
  ): Promise<MailMessage | null> {
    const tokenId = Number(request.params.tokenId);
    const token = await this.tokens.findById(tokenId, m);
    if (!token || token.revokedAt || !token.expiresAt) return null;
    // Whoever it was for must still answer for the token (a row enqueued before the recipient
    // was named is its person's).
    const recipientId = Number(request.params.recipientId ?? token.userId);
    const [user, account] = await Promise.all([
      this.users.findById(recipientId, m),
      this.tokens.findServiceAccountOwner(m, token.userId),
    ]);
    if (!user || user.email !== request.to) return null;
    if (account) {
      const managers = await this.tokens.findTeamManagers(m, account.teamId);
      if (!managers.some((manager) => manager.id === user.id)) return null;
    } else if (user.id !== token.userId) {
      return null;
    }
    const left = token.expiresAt.getTime() - this.clock.nowMs();
    const today = request.params.step === 'day';
    if (left <= 0 || left > (today ? DAY_MS : 7 * DAY_MS)) return null;
    const days = Math.max(1, Math.ceil(left / DAY_MS));
    const base = this.config.app.publicUrl;
    const url = account
      ? `${base}${serviceAccountPath(account.teamId, account.accountId)}`
      : `${base}/settings/api-tokens/${token.id}`;
    const whose = account
      ? `The token "${token.name}" of the service account ${account.accountName}`
      : `Your API token "${token.name}"`;
    return {
      to: user.email,
      subject: today ? `${whose} expires within a day` : `${whose} expires in ${days} days`,
      ...this.mailer.render(TOKEN_EXPIRY_MAIL, {
        name: user.name,
        tokenName: token.name,
        serviceAccount: account?.accountName ?? '',
        team: account?.teamName ?? '',
        today,
        days,
        expiresAt: token.expiresAt.toISOString().slice(0, 16).replace('T', ' '),
        tokenUrl: url,
      }),
    };
  }
}
