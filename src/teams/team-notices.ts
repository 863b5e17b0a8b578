import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import type { MailMessage } from '../mail/mail-message.js';
import { ComposesMail, Mailer } from '../mail/mailer.js';
import { UsersRepository } from '../users/users.repository.js';

export const TEAM_NOTICE_MAIL = 'team-notice';

/** The changes to a person's place in a team that they are told about by mail. */
const NOTICES = {
  added: (team: string, role: string) => ({
    subject: `You were added to ${team}`,
    line: `You were added to the team ${team} as ${role}.`,
  }),
  removed: (team: string) => ({
    subject: `You were removed from ${team}`,
    line: `You are no longer a member of the team ${team}. API tokens of yours now answer with your personal team if that was your current one.`,
  }),
  role: (team: string, role: string) => ({
    subject: `Your role in ${team} changed`,
    line: `You are now ${role === 'admin' ? 'an admin' : 'a member'} of the team ${team}.`,
  }),
  'transferred-away': (team: string) => ({
    subject: `You handed ${team} over`,
    line: `The team ${team} has a new owner; you are now one of its admins.`,
  }),
  'two-factor-required': (team: string) => ({
    subject: `${team} requires two-factor sign-in`,
    line: `The team ${team} now requires two-factor sign-in. Until you turn it on, the API refuses your tokens while they act in ${team}, and the pages remind you. Turn it on in Account Settings, under Security.`,
  }),
  'transferred-to': (team: string) => ({
    subject: `You now own ${team}`,
    line: `The team ${team} was handed over to you: you are its owner now.`,
  }),
  /** To the team's owner: `who` deleted their account, and so left the team. */
  'member-deleted-account': (team: string, _role: string, who: string) => ({
    subject: `${who} left ${team}`,
    line: `${who} deleted their Tessera account and so left the team ${team}. Their API tokens were revoked with it.`,
  }),
} as const;

export type TeamNoticeKind = keyof typeof NOTICES;

/** Mails a person about a change to their membership, in the transaction that makes it. */
@Injectable()
export class TeamNotices {
  constructor(
    private readonly mailer: Mailer,
    private readonly users: UsersRepository,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  async send(
    manager: EntityManager,
    userId: number,
    kind: TeamNoticeKind,
    team: { id: number; name: string },
    role = '',
    /** Who the notice is about, when not the person it goes to. */
    who = '',
  ): Promise<void> {
    const user = await this.users.findById(userId, manager);
    if (!user) return;
    await this.mailer.send(manager, TEAM_NOTICE_MAIL, user.email, {
      userId,
      notice: kind,
      teamId: team.id,
      teamName: team.name,
      role,
      ...(who ? { who } : {}),
    });
  }

  @ComposesMail(TEAM_NOTICE_MAIL)
  private async compose(
    manager: EntityManager,
    request: { to: string; params: Record<string, unknown> },
  ): Promise<MailMessage | null> {
    const user = await this.users.findById(Number(request.params.userId), manager);
    const notice = NOTICES[request.params.notice as TeamNoticeKind];
    if (!user || user.email !== request.to || !notice) return null;
    const { subject, line } = notice(
      String(request.params.teamName),
      String(request.params.role),
      String(request.params.who ?? ''),
    );
    return {
      to: user.email,
      subject,
      ...this.mailer.render('team-notice', {
        name: user.name,
        line,
        teamsUrl: `${this.config.app.publicUrl}/teams`,
      }),
    };
  }
}
