import { FormPage } from '../form-page.js';
import { Controller, Get, Param, Post, Redirect, Render, Req, Session } from '@nestjs/common';
import { CurrentActor } from '../../http/access.js';
import { signedInUserOf } from '../page-context.js';
import type { Actor } from '../../common/actor.js';
import type { Request } from 'express';
import type { PageSession } from '../session/page-session.js';
import { Public, SignedIn } from '../../common/auth-policy.decorator.js';
import { IdParam } from '../../common/decorators/id-param.decorator.js';
import { flash } from '../flash.js';
import { InvitationResponsesService } from '../../invitations/invitation-responses.service.js';

/** An invitation's link, and its addressee's answer (from the link or the dashboard). */
@Controller('invitations')
export class InvitationsController {
  constructor(private readonly invitations: InvitationResponsesService) {}

  @Get(':token')
  @Public()
  @Render('invitations/show')
  async show(@Param('token') token: string, @Req() req: Request): Promise<object> {
    const view = await this.invitations.view(token);
    const viewer = signedInUserOf(req);
    return {
      title: `Join ${view.team.name}`,
      ...view,
      token,
      forViewer: viewer?.email === view.invitation.email,
      loginUrl: `/login?return_to=${encodeURIComponent(`/invitations/${token}`)}`,
      registerUrl: `/register?invitation=${encodeURIComponent(token)}&email=${encodeURIComponent(view.invitation.email)}`,
    };
  }

  @Post(':token/accept')
  @SignedIn()
  @Redirect(undefined, 303)
  async accept(
    @CurrentActor() actor: Actor,
    @Param('token') token: string,
    @Session() session: PageSession,
  ): Promise<{ url: string }> {
    const team = await this.invitations.acceptByToken(actor, token);
    return this.joined(session, team);
  }

  @Post(':token/decline')
  @SignedIn()
  @Redirect('/dashboard', 303)
  async decline(
    @CurrentActor() actor: Actor,
    @Param('token') token: string,
    @Session() session: PageSession,
  ): Promise<void> {
    const team = await this.invitations.declineByToken(actor, token);
    flash(session, { notice: `You declined the invitation to ${team.name}.` });
  }

  @Post('pending/:invitationId/accept')
  @SignedIn()
  @FormPage('/dashboard')
  @Redirect(undefined, 303)
  async acceptListed(
    @CurrentActor() actor: Actor,
    @IdParam('invitationId') id: number,
    @Session() session: PageSession,
  ): Promise<{ url: string }> {
    return this.joined(session, await this.invitations.acceptById(actor, id));
  }

  @Post('pending/:invitationId/decline')
  @SignedIn()
  @FormPage('/dashboard')
  @Redirect('/dashboard', 303)
  async declineListed(
    @CurrentActor() actor: Actor,
    @IdParam('invitationId') id: number,
    @Session() session: PageSession,
  ): Promise<void> {
    const team = await this.invitations.declineById(actor, id);
    flash(session, { notice: `You declined the invitation to ${team.name}.` });
  }

  private joined(session: PageSession, team: { id: number; name: string }): { url: string } {
    flash(session, { notice: `You joined ${team.name}; it is now your current team.` });
    return { url: `/teams/${team.id}` };
  }
}
