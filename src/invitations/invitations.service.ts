import { AuditLog } from '../audit/audit-log.js';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash, randomBytes } from 'node:crypto';
import { DataSource, type EntityManager } from 'typeorm';
import { accountOf, type Actor } from '../common/actor.js';
import type { KeysetPage } from '../common/keyset-page.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { Transactions } from '../database/transactions.js';
import { EmailVerificationService } from '../email-verification/email-verification.service.js';
import type { MailMessage } from '../mail/mail-message.js';
import { ComposesMail, Mailer } from '../mail/mailer.js';
import type { AssignableRole } from '../teams/dto/add-member.dto.js';
import { Team } from '../teams/team.entity.js';
import { AlreadyMemberError, PersonalTeamError } from '../teams/teams.errors.js';
import { TeamMembersService } from '../teams/team-members.service.js';
import { TeamsService } from '../teams/teams.service.js';
import { isServiceAccount, type User } from '../users/user.entity.js';
import { UsersRepository } from '../users/users.repository.js';
import {
  AlreadyInvitedError,
  InvitationLinkError,
  InvitationNotFoundError,
  WrongInviteeError,
} from './invitations.errors.js';
import { TeamInvitation } from './team-invitation.entity.js';
import { Clock } from '../clock/clock.js';
import { withArticle } from '../common/words.js';
import { OnEvent } from '../events/events.js';

export const TEAM_INVITATION_MAIL = 'team-invitation';
/** 32 random bytes in base64url: what an invitation's link carries. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;
const DAY_MS = 86_400_000;

const hashOf = (token: string): string => createHash('sha256').update(token).digest('hex');

/** For a query on invitations (named `table`): whoever sent it is still the team's owner or an admin. */
const senderMayInvite = (table = 'i') =>
  `EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = ${table}.team_id
    AND m.user_id = ${table}.invited_by_id AND m.role IN ('owner', 'admin'))`;

/** What the page of an invitation's link shows. */
export interface InvitationView {
  invitation: TeamInvitation;
  team: Team;
  inviter: string | null;
  /** Whether an account uses the invited address (only said to someone holding the link). */
  hasAccount: boolean;
}

/**
 * Invitations to teams by e-mail. Owners and admins invite any address; only the addressee,
 * signed in with that address confirmed, accepts or declines, once. The link's token is issued
 * when the mail is sent, stored only as its SHA-256, and replaced when the mail is sent again.
 */
@Injectable()
export class InvitationsService {
  constructor(
    private readonly audit: AuditLog,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly teams: TeamsService,
    private readonly members: TeamMembersService,
    private readonly users: UsersRepository,
    private readonly transactions: Transactions,
    private readonly mailer: Mailer,
    private readonly verification: EmailVerificationService,
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
    return this.transactions.run(async (m) => {
      const current = await this.repo(m).findOneBy({ teamId: team.id, email: input.email });
      // One sent by someone who may no longer invite cannot be accepted: a new one replaces it.
      if (current && isOpen(current, this.clock.now()) && (await this.stillBacked(m, current))) {
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
      await this.repo(m).save(invitation);
      await this.mail(m, invitation);
      this.audit.recordAfterCommit(m, actor, {
        event: 'team.member_invited',
        teamId: team.id,
        target: { type: 'invitation', id: invitation.id },
        detail: { team: team.name, email: input.email, role: input.role },
      });
      return invitation;
    });
  }

  /** A new link, and seven more days (owners and admins); the old link stops working. */
  async resend(actor: Actor, teamId: number, invitationId: number): Promise<TeamInvitation> {
    const invitation = await this.ofTeam(actor, teamId, invitationId);
    return this.transactions.run(async (m) => {
      invitation.expiresAt = this.expiry();
      invitation.tokenHash = null;
      await this.repo(m).save(invitation);
      await this.mail(m, invitation);
      return invitation;
    });
  }

  /** Withdraws an invitation still waiting; one answered meanwhile is said to be used. */
  async revoke(actor: Actor, teamId: number, invitationId: number): Promise<TeamInvitation> {
    const invitation = await this.ofTeam(actor, teamId, invitationId);
    const done = await this.transactions.run((m) =>
      this.repo(m).update(
        { id: invitation.id, status: 'pending' },
        { status: 'revoked', respondedAt: this.clock.now() },
      ),
    );
    if (!done.affected) throw new InvitationLinkError('used');
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

  /** Invitations waiting for this person, for their dashboard: only to a confirmed address. */
  async pendingFor(user: User): Promise<(TeamInvitation & { team: Team })[]> {
    if (!this.isConfirmed(user)) return [];
    const rows = await this.repo()
      .createQueryBuilder('i')
      .innerJoinAndSelect('i.team', 'team')
      .leftJoinAndSelect('i.invitedBy', 'inviter')
      .where('i.email = :email AND i.status = :pending', { email: user.email, pending: 'pending' })
      .andWhere(senderMayInvite())
      .orderBy('i.created_at', 'ASC')
      .getMany();
    return rows.filter((i) => i.expiresAt > this.clock.now()) as (TeamInvitation & {
      team: Team;
    })[];
  }

  /** What the link's page shows; an unknown, used, expired or withdrawn link says which. */
  async view(token: string): Promise<InvitationView> {
    const invitation = await this.byToken(token);
    const stillBacked = await this.repo()
      .createQueryBuilder('i')
      .where('i.id = :id', { id: invitation.id })
      .andWhere(senderMayInvite())
      .getExists();
    if (!stillBacked) throw new InvitationLinkError('withdrawn');
    const [team, inviter, account] = await Promise.all([
      this.dataSource.manager.getRepository(Team).findOneByOrFail({ id: invitation.teamId }),
      invitation.invitedById ? this.users.findById(invitation.invitedById) : null,
      this.users.findByEmail(invitation.email),
    ]);
    return { invitation, team, inviter: inviter?.name ?? null, hasAccount: !!account };
  }

  /** The addressee joins the team, which becomes their current one. */
  acceptByToken(actor: Actor, token: string): Promise<Team> {
    return this.respond(actor, { token }, 'accepted');
  }

  declineByToken(actor: Actor, token: string): Promise<Team> {
    return this.respond(actor, { token }, 'declined');
  }

  /** From the dashboard, where the invitation is listed for its addressee. */
  acceptById(actor: Actor, id: number): Promise<Team> {
    return this.respond(actor, { id }, 'accepted');
  }

  declineById(actor: Actor, id: number): Promise<Team> {
    return this.respond(actor, { id }, 'declined');
  }

  private async respond(
    actor: Actor,
    which: { token: string } | { id: number },
    answer: 'accepted' | 'declined',
  ): Promise<Team> {
    const user = await this.users.findById(accountOf(actor));
    // A service account answers no invitation: it is never a member of a team.
    if (!user || isServiceAccount(user)) throw new InvitationNotFoundError();
    const invitation =
      'token' in which ? await this.byToken(which.token) : await this.openById(which.id, user);
    if (invitation.email !== user.email || !this.isConfirmed(user)) {
      throw new WrongInviteeError(user.email);
    }
    const outcome = await this.transactions.run(async (m) => {
      if (answer === 'declined') {
        const done = await this.repo(m).update(
          { id: invitation.id, status: 'pending' },
          { status: answer, respondedAt: this.clock.now() },
        );
        return done.affected ? this.teamOf(m, invitation) : ('used' as const);
      }
      const accepted = await this.markAccepted(m, invitation);
      if (accepted !== true) return accepted;
      await this.members.join(m, actor, invitation.teamId, invitation.role);
      return this.teamOf(m, invitation);
    });
    if (typeof outcome === 'string') throw new InvitationLinkError(outcome);
    return outcome;
  }

  /** Registering from an invitation's link: the account joins once its address is confirmed. */
  @OnEvent('account.registered')
  async claim(
    { actor, user, invitation: token }: { actor: Actor; user: User; invitation?: string },
    manager: EntityManager,
  ): Promise<void> {
    if (!token || !TOKEN_SHAPE.test(token)) return;
    const invitation = await this.repo(manager).findOneBy({ tokenHash: hashOf(token) });
    if (!invitation || !isOpen(invitation, this.clock.now()) || invitation.email !== user.email)
      return;
    await this.repo(manager).update({ id: invitation.id }, { claimedById: user.id });
    // Without e-mail confirmation there is nothing more to wait for.
    if (!this.verification.required) await this.acceptClaimed({ actor, joined: [] }, manager);
  }

  @OnEvent('address.confirmed')
  async acceptClaimed(
    { actor, joined }: { actor: Actor; joined: string[] },
    manager: EntityManager,
  ): Promise<void> {
    const userId = accountOf(actor);
    const user = await this.users.findById(userId, manager);
    const claimed = await this.repo(manager).findBy({ claimedById: userId, status: 'pending' });
    for (const invitation of claimed) {
      if (!user || invitation.email !== user.email || !isOpen(invitation, this.clock.now()))
        continue;
      if ((await this.markAccepted(manager, invitation)) !== true) continue;
      await this.members.join(manager, actor, invitation.teamId, invitation.role);
      joined.push((await this.teamOf(manager, invitation)).name);
    }
  }

  /**
   * Accepts a pending invitation in one conditional statement, which also asks that whoever sent
   * it is still the team's owner or an admin: an invitation does not outlive its sender's right
   * to invite (removed from the team, made a member, account deleted). One sent by someone who
   * lost that right is withdrawn instead. The sender's membership is written too (see
   * TeamsService.certifyRole), so on a cluster a change of their role on another node at the
   * same moment conflicts with the acceptance.
   */
  private async markAccepted(
    manager: EntityManager,
    { id, teamId, invitedById }: TeamInvitation,
  ): Promise<true | 'used' | 'withdrawn'> {
    const done = await this.repo(manager)
      .createQueryBuilder()
      .update()
      .set({ status: 'accepted', respondedAt: this.clock.now() })
      .where('id = :id AND status = :pending', { id, pending: 'pending' })
      .andWhere(senderMayInvite('team_invitations'))
      .execute();
    if (done.affected) {
      await this.teams.certifyRole(manager, teamId, invitedById!);
      return true;
    }
    const withdrawn = await this.repo(manager).update(
      { id, status: 'pending' },
      { status: 'revoked', respondedAt: this.clock.now() },
    );
    return withdrawn.affected ? 'withdrawn' : 'used';
  }

  private teamOf(manager: EntityManager, invitation: TeamInvitation): Promise<Team> {
    return manager.getRepository(Team).findOneByOrFail({ id: invitation.teamId });
  }

  private async byToken(token: string): Promise<TeamInvitation> {
    if (!TOKEN_SHAPE.test(token)) throw new InvitationLinkError('unknown');
    const invitation = await this.repo().findOneBy({ tokenHash: hashOf(token) });
    if (!invitation) throw new InvitationLinkError('unknown');
    // An answered link keeps its hash, so it can say so (a resent mail's replaces it).
    if (invitation.status === 'revoked') throw new InvitationLinkError('withdrawn');
    if (invitation.status !== 'pending') throw new InvitationLinkError('used');
    if (invitation.expiresAt <= this.clock.now()) throw new InvitationLinkError('expired');
    return invitation;
  }

  private async openById(id: number, user: User): Promise<TeamInvitation> {
    const invitation = await this.repo().findOneBy({ id, email: user.email });
    if (!invitation) throw new InvitationNotFoundError();
    if (invitation.status !== 'pending') throw new InvitationLinkError('used');
    if (invitation.expiresAt <= this.clock.now()) throw new InvitationLinkError('expired');
    return invitation;
  }

  /** Whether whoever sent the invitation is still the team's owner or an admin. */
  private stillBacked(manager: EntityManager, invitation: TeamInvitation): Promise<boolean> {
    return this.repo(manager)
      .createQueryBuilder('i')
      .where('i.id = :id', { id: invitation.id })
      .andWhere(senderMayInvite())
      .getExists();
  }

  /** One of the team's own invitations, for its owner or an admin; anything else is not found. */
  private async ofTeam(actor: Actor, teamId: number, id: number): Promise<TeamInvitation> {
    const team = await this.teams.getManageableTeam(actor, teamId);
    const invitation = await this.repo().findOneBy({ id, teamId: team.id, status: 'pending' });
    if (!invitation) throw new InvitationNotFoundError();
    return invitation;
  }

  private isConfirmed(user: User): boolean {
    return !this.verification.isPending(user);
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

/** Waiting for an answer and not expired at `now`. */
function isOpen(invitation: TeamInvitation, now: Date): boolean {
  return invitation.status === 'pending' && invitation.expiresAt > now;
}
