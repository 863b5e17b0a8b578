import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { Clock } from '../clock/clock.js';
import { accountOf, type Actor } from '../common/actor.js';
import { Transactions } from '../database/transactions.js';
import { EmailVerificationService } from '../email-verification/email-verification.service.js';
import { OnEvent } from '../events/events.js';
import { Team } from '../teams/team.entity.js';
import { TeamMembersService } from '../teams/team-members.service.js';
import { TeamsService } from '../teams/teams.service.js';
import { isServiceAccount, type User } from '../users/user.entity.js';
import { UsersRepository } from '../users/users.repository.js';
import {
  InvitationLinkError,
  InvitationNotFoundError,
  WrongInviteeError,
} from './invitations.errors.js';
import { hashOf, isOpen, senderMayInvite, stillBacked, TOKEN_SHAPE } from './invitation-links.js';
import { TeamInvitation } from './team-invitation.entity.js';

/** What the page of an invitation's link shows. */
export interface InvitationView {
  invitation: TeamInvitation;
  team: Team;
  inviter: string | null;
  /** Whether an account uses the invited address (only said to someone holding the link). */
  hasAccount: boolean;
}

/**
 * An invitation's addressee: what its link shows, and their answer, from the link or the
 * dashboard, signed in with the invited address confirmed; an account registered from a link
 * joins once its address is confirmed. Each invitation is answered once. Sending, resending and
 * withdrawing invitations is InvitationsService's.
 */
@Injectable()
export class InvitationResponsesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly teams: TeamsService,
    private readonly members: TeamMembersService,
    private readonly users: UsersRepository,
    private readonly transactions: Transactions,
    private readonly verification: EmailVerificationService,
    private readonly clock: Clock,
  ) {}

  private repo(manager?: EntityManager) {
    return (manager ?? this.dataSource.manager).getRepository(TeamInvitation);
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
    if (!(await stillBacked(this.repo(), invitation.id)))
      throw new InvitationLinkError('withdrawn');
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

  private isConfirmed(user: User): boolean {
    return !this.verification.isPending(user);
  }
}
