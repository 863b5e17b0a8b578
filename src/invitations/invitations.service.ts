import { AuditLog } from '../audit/audit-log.js';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { DataSource, type EntityManager } from 'typeorm';
import { accountOf, type Actor } from '../common/actor.js';
import { isUniqueViolation } from '../common/errors/database-errors.js';
import type { KeysetPage } from '../common/keyset-page.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { Transactions } from '../database/transactions.js';
import type { MailMessage } from '../mail/mail-message.js';
import { ComposesMail, Mailer } from '../mail/mailer.js';
import type { AssignableRole } from '../teams/dto/add-member.dto.js';
import { AlreadyMemberError, PersonalTeamError } from '../teams/teams.errors.js';
import { TeamsService } from '../teams/teams.service.js';
import { UsersRepository } from '../users/users.repository.js';
import {
  AlreadyInvitedError,
  InvitationLinkError,
  InvitationNotFoundError,
} from './invitations.errors.js';
import { hashOf, isOpen, senderMayInvite, stillBacked } from './invitation-links.js';
import { TeamInvitation } from './team-invitation.entity.js';
import { Clock } from '../clock/clock.js';
import { withArticle } from '../common/words.js';

export const TEAM_INVITATION_MAIL = 'team-invitation';
const DAY_MS = 86_400_000;

/**
 * Invitations to teams by e-mail, as the team's owners and admins send them: invite any
 * address, resend, withdraw, list those waiting. The link's token is issued when the mail is
 * sent, stored only as its SHA-256, and replaced when the mail is sent again. The addressee's
 * answer is InvitationResponsesService's.
 */
@Injectable()
export class InvitationsService {
  constructor(
    private readonly audit: AuditLog,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly teams: TeamsService,
    private readonly users: UsersRepository,
    private readonly transactions: Transactions,
    private readonly mailer: Mailer,
    private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  private repo(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(TeamInvitation);
  }

  /**
   * Invites an address (owners and admins). The answer is the same whether or not the address
   * has an account; someone already in the team, or invited and not yet answering, is said so.
   */
  async invite(
    actor: Actor,
    teamId: number,
    input: { email: string; role: AssignableRole },
  ): Promise<TeamInvitation> {
    const team = await this.teams.getManageableTeam(actor, teamId);
    if (team.personal) throw new PersonalTeamError();
    const existing = await this.users.findByEmail(input.email);
    if (existing && (await this.teams.isMember(team.id, existing.id))) {
      throw new AlreadyMemberError();
    }
    return this.transactions.run(
      async (m) => {
        // An address never invited to the team gets a new row: of two invitations of it at once,
        // the unique key refuses the second's insert. Only a row already there is locked, by its
        // id (MySQL/MariaDB; SQLite's transactions are serial), so that of two renewing it at
        // once the second finds the first's: a locking read that finds nothing would lock the
        // index's gap, where the team's other invitations of the moment insert, and deadlock them.
        // READ COMMITTED, so that what is read after the lock (whether the invitation's sender may
        // still invite) is what the first committed, not what the transaction's first read saw.
        const sqlite = m.connection.options.type === 'better-sqlite3';
        const seen = await this.repo(m).findOne({
          where: { teamId: team.id, email: input.email },
          select: { id: true },
        });
        const current =
          seen &&
          (await this.repo(m).findOne({
            where: { id: seen.id },
            ...(sqlite ? {} : { lock: { mode: 'pessimistic_write' as const } }),
          }));
        // One sent by someone who may no longer invite cannot be accepted: a new one replaces it.
        if (
          current &&
          isOpen(current, this.clock.now()) &&
          (await stillBacked(this.repo(m), current.id))
        ) {
          throw new AlreadyInvitedError();
        }
        const fields = {
          role: input.role,
          invitedById: accountOf(actor),
          status: 'pending' as const,
          tokenHash: null,
          claimedById: null,
          respondedAt: null,
          expiresAt: this.expiry(),
        };
        const invitation = current
          ? Object.assign(current, fields)
          : this.repo(m).create({ teamId: team.id, email: input.email, ...fields });
        try {
          await this.repo(m).save(invitation);
        } catch (error) {
          if (isUniqueViolation(error)) throw new AlreadyInvitedError();
          throw error;
        }
        await this.mail(m, invitation);
        this.audit.recordIn(m, actor, {
          event: 'team.member_invited',
          teamId: team.id,
          target: { type: 'invitation', id: invitation.id },
          detail: { team: team.name, email: input.email, role: input.role },
        });
        return invitation;
      },
      { isolation: 'READ COMMITTED' },
    );
  }

  /**
   * A new link, and seven more days (owners and admins); the old link stops working. Only while
   * the invitation waits: one withdrawn or answered meanwhile stays so (404).
   */
  async resend(actor: Actor, teamId: number, invitationId: number): Promise<TeamInvitation> {
    const invitation = await this.ofTeam(actor, teamId, invitationId);
    return this.transactions.run(async (m) => {
      const renewal = { expiresAt: this.expiry(), tokenHash: null };
      const renewed = await this.repo(m).update({ id: invitation.id, status: 'pending' }, renewal);
      if (!renewed.affected) throw new InvitationNotFoundError();
      await this.mail(m, Object.assign(invitation, renewal));
      return invitation;
    });
  }

  /** Withdraws an invitation still waiting; one answered meanwhile is said to be used. */
  async revoke(actor: Actor, teamId: number, invitationId: number): Promise<TeamInvitation> {
    const invitation = await this.ofTeam(actor, teamId, invitationId);
    const answered = await this.transactions.run(async (m) => {
      const { affected } = await this.repo(m).update(
        { id: invitation.id, status: 'pending' },
        { status: 'revoked', respondedAt: this.clock.now() },
      );
      return affected ? null : (await this.repo(m).findOneBy({ id: invitation.id }))?.status;
    });
    // Answered since it was read: accepted, the link was used; withdrawn by a request racing
    // this one (or declined), it is gone, as it is to a withdrawal sent after.
    if (answered === 'accepted') throw new InvitationLinkError('used');
    if (answered !== null) throw new InvitationNotFoundError();
    return invitation;
  }

  /**
   * The team's invitations still waiting for an answer, for its page; not those whose sender has
   * lost the right to invite (they can no longer be accepted).
   */
  forTeam(teamId: number): Promise<TeamInvitation[]> {
    return this.repo()
      .createQueryBuilder('i')
      .where('i.team_id = :teamId AND i.status = :pending', { teamId, pending: 'pending' })
      .andWhere(senderMayInvite())
      .orderBy('i.created_at', 'ASC')
      .getMany();
  }

  /**
   * A page of the team's invitations still waiting for an answer, by id (one row beyond it),
   * for its owner and admins, as its page shows them.
   */
  async pageForTeam(actor: Actor, teamId: number, page: KeysetPage): Promise<TeamInvitation[]> {
    const team = await this.teams.getManageableTeam(actor, teamId);
    const query = this.repo()
      .createQueryBuilder('i')
      .where('i.team_id = :teamId AND i.status = :pending', { teamId: team.id, pending: 'pending' })
      .andWhere(senderMayInvite())
      .orderBy('i.id', 'ASC')
      .limit(page.limit + 1);
    if (page.after !== undefined) query.andWhere('i.id > :after', { after: page.after });
    return query.getMany();
  }

  /** One of the team's own invitations, for its owner or an admin; anything else is not found. */
  private async ofTeam(actor: Actor, teamId: number, id: number): Promise<TeamInvitation> {
    const team = await this.teams.getManageableTeam(actor, teamId);
    const invitation = await this.repo().findOneBy({ id, teamId: team.id, status: 'pending' });
    if (!invitation) throw new InvitationNotFoundError();
    return invitation;
  }

  private expiry(): Date {
    return new Date(this.clock.nowMs() + this.config.teams.invitationTtlDays * DAY_MS);
  }

  private mail(manager: EntityManager, invitation: TeamInvitation): Promise<void> {
    return this.mailer.send(manager, TEAM_INVITATION_MAIL, invitation.email, {
      invitationId: invitation.id,
    });
  }

  /** Made when sent: a new link, replacing any earlier one; nothing once answered or expired. */
  @ComposesMail(TEAM_INVITATION_MAIL)
  private async compose(
    manager: EntityManager,
    request: { to: string; params: Record<string, unknown> },
  ): Promise<MailMessage | null> {
    const invitation = await this.repo(manager).findOne({
      where: { id: Number(request.params.invitationId) },
      relations: { team: true, invitedBy: true },
    });
    if (!invitation || !isOpen(invitation, this.clock.now()) || invitation.email !== request.to)
      return null;
    const token = randomBytes(32).toString('base64url');
    await this.repo(manager).update({ id: invitation.id }, { tokenHash: hashOf(token) });
    const days = Math.max(
      1,
      Math.round((invitation.expiresAt.getTime() - this.clock.nowMs()) / DAY_MS),
    );
    return {
      to: invitation.email,
      subject: `You are invited to join ${invitation.team!.name} on Tessera`,
      ...this.mailer.render('team-invitation', {
        team: invitation.team!.name,
        inviter: invitation.invitedBy?.name ?? 'A team admin',
        role: withArticle(invitation.role),
        link: `${this.config.app.publicUrl}/invitations/${token}`,
        days,
      }),
    };
  }
}
