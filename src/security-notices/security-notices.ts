import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import type { MailMessage } from '../mail/mail-message.js';
import { ComposesMail, Mailer } from '../mail/mailer.js';
import { UsersRepository } from '../users/users.repository.js';

export const SECURITY_NOTICE_MAIL = 'security-notice';

/**
 * Each notice: its subject, and the template (views/mail/<name>) that says what happened. The
 * `service-account-…` notices go to the owners and admins of the team whose service account's
 * token it is (`about` names the account, the team and its page).
 */
const NOTICES = {
  'email-changed': 'The email address of your Tessera account was changed',
  'two-factor-enabled': 'Two-factor sign-in was turned on',
  'two-factor-disabled': 'Two-factor sign-in was turned off',
  'token-created': 'A new API token was created',
  'passkey-added': 'A passkey was added to your Tessera account',
  'passkey-removed': 'A passkey was removed from your Tessera account',
  'passkeys-removed': 'The passkeys of your Tessera account were removed',
  'token-revoked-by-team': 'A team revoked one of your API tokens',
  'token-leaked': 'One of your API tokens was found in public and revoked',
  'account-disabled': 'Your Tessera account was disabled',
  'account-enabled': 'Your Tessera account was enabled again',
  'two-factor-reset': 'The two-factor sign-in of your Tessera account was reset',
  'service-account-token-created': "A token was created for one of your team's service accounts",
  'service-account-token-leaked':
    "A token of one of your team's service accounts was found in public and revoked",
} as const;

export type SecurityNoticeKind = keyof typeof NOTICES;

/**
 * Tells a person by mail about a change to how their account is reached, in the transaction
 * that makes it, so that someone else making it cannot go unnoticed.
 */
@Injectable()
export class SecurityNotices {
  constructor(
    private readonly mailer: Mailer,
    private readonly users: UsersRepository,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  /**
   * `to`: the account's address unless said otherwise (the old one, for an address change).
   * `detail`: what the template names (a token's name), never a secret. `foundAt`: where a
   * leaked token was found (a public address). `about`: the service account a token belongs
   * to, its team and the path of its page.
   */
  async send(
    manager: EntityManager,
    userId: number,
    notice: SecurityNoticeKind,
    options: {
      to?: string;
      detail?: string;
      foundAt?: string;
      about?: { account: string; team: string; path: string };
    } = {},
  ): Promise<void> {
    const to = options.to ?? (await this.users.findById(userId, manager))?.email;
    if (!to) return;
    await this.mailer.send(manager, SECURITY_NOTICE_MAIL, to, {
      userId,
      notice,
      detail: options.detail ?? '',
      ...(options.foundAt ? { foundAt: options.foundAt } : {}),
      ...(options.about
        ? { account: options.about.account, team: options.about.team, path: options.about.path }
        : {}),
    });
  }

  /** Nothing to send once the account is gone. */
  @ComposesMail(SECURITY_NOTICE_MAIL)
  private async compose(
    manager: EntityManager,
    request: { to: string; params: Record<string, unknown> },
  ): Promise<MailMessage | null> {
    const notice = request.params.notice as SecurityNoticeKind;
    const user = await this.users.findById(Number(request.params.userId), manager);
    if (!user || !(notice in NOTICES)) return null;
    const base = this.config.app.publicUrl;
    return {
      to: request.to,
      subject: NOTICES[notice],
      ...this.mailer.render(notice, {
        name: user.name,
        detail: String(request.params.detail ?? ''),
        foundAt: String(request.params.foundAt ?? ''),
        account: String(request.params.account ?? ''),
        team: String(request.params.team ?? ''),
        pageUrl: `${base}${String(request.params.path ?? '/teams')}`,
        securityUrl: `${base}/settings/security`,
        tokensUrl: `${base}/settings/api-tokens`,
        resetUrl: `${base}/forgot-password`,
      }),
    };
  }
}
