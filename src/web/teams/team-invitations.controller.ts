import { Controller, Post, Redirect, Session } from '@nestjs/common';
import { Form } from '../../common/validation/form.decorator.js';
import { CurrentActor } from '../../http/access.js';
import type { Actor } from '../../common/actor.js';
import type { PageSession } from '../session/page-session.js';
import { SignedIn } from '../../common/auth-policy.decorator.js';
import { IdParam } from '../../common/decorators/id-param.decorator.js';
import { flash } from '../flash.js';
import { FormPage } from '../form-page.js';
import { RouteLimit } from '../../http/route-limit.js';
import { InviteForm } from '../invitations/invitations.forms.js';
import { InvitationsService } from '../../invitations/invitations.service.js';

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
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @Form() form: InviteForm,
    @Session() session: PageSession,
  ): Promise<{ url: string }> {
    const invitation = await this.invitations.invite(actor, id, form);
    flash(session, { notice: `An invitation was sent to ${invitation.email}.` });
    return { url: `/teams/${id}` };
  }

  @Post(':invitationId/resend')
  @RouteLimit('team-invites')
  @FormPage('/teams/:id')
  @Redirect(undefined, 303)
  async resend(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @IdParam('invitationId') invitationId: number,
    @Session() session: PageSession,
  ): Promise<{ url: string }> {
    const invitation = await this.invitations.resend(actor, id, invitationId);
    flash(session, {
      notice: `A new invitation was sent to ${invitation.email}; the earlier link no longer works.`,
    });
    return { url: `/teams/${id}` };
  }

  @Post(':invitationId/revoke')
  @FormPage('/teams/:id')
  @Redirect(undefined, 303)
  async revoke(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @IdParam('invitationId') invitationId: number,
    @Session() session: PageSession,
  ): Promise<{ url: string }> {
    const invitation = await this.invitations.revoke(actor, id, invitationId);
    flash(session, { notice: `The invitation to ${invitation.email} was withdrawn.` });
    return { url: `/teams/${id}` };
  }
}
