import { Body, Controller, Post, Redirect, Session } from '@nestjs/common';
import type { SessionData } from 'express-session';
import { SignedIn } from '../auth/auth-policy.decorator.js';
import { IdParam } from '../common/decorators/id-param.decorator.js';
import { SignedInUser } from '../common/decorators/signed-in-user.decorator.js';
import { flash } from '../common/web/flash.js';
import { FormPage } from '../common/web/form-page.js';
import { RouteLimit } from '../rate-limit/route-limit.guard.js';
import type { User } from '../users/user.entity.js';
import { InviteForm } from './dto/invite.form.js';
import { InvitationsService } from './invitations.service.js';

/** A team's invitations, managed from its page by its owner and admins. */
@Controller('teams/:id/invitations')
@SignedIn()
export class TeamInvitationsController {
  constructor(private readonly invitations: InvitationsService) {}

  @Post()
  @RouteLimit('team-invites')
  @FormPage('/teams/:id')
  @Redirect(undefined, 303)
  async invite(
    @SignedInUser() user: User,
    @IdParam() id: number,
    @Body() form: InviteForm,
    @Session() session: SessionData,
  ): Promise<{ url: string }> {
    const invitation = await this.invitations.invite({ userId: user.id }, id, form);
    flash(session, { notice: `An invitation was sent to ${invitation.email}.` });
    return { url: `/teams/${id}` };
  }

  @Post(':invitationId/resend')
  @RouteLimit('team-invites')
  @FormPage('/teams/:id')
  @Redirect(undefined, 303)
  async resend(
    @SignedInUser() user: User,
    @IdParam() id: number,
    @IdParam('invitationId') invitationId: number,
    @Session() session: SessionData,
  ): Promise<{ url: string }> {
    const invitation = await this.invitations.resend({ userId: user.id }, id, invitationId);
    flash(session, {
      notice: `A new invitation was sent to ${invitation.email}; the earlier link no longer works.`,
    });
    return { url: `/teams/${id}` };
  }

  @Post(':invitationId/revoke')
  @FormPage('/teams/:id')
  @Redirect(undefined, 303)
  async revoke(
    @SignedInUser() user: User,
    @IdParam() id: number,
    @IdParam('invitationId') invitationId: number,
    @Session() session: SessionData,
  ): Promise<{ url: string }> {
    const invitation = await this.invitations.revoke({ userId: user.id }, id, invitationId);
    flash(session, { notice: `The invitation to ${invitation.email} was withdrawn.` });
    return { url: `/teams/${id}` };
  }
}
