import { Controller, Get, Redirect, Render, Req } from '@nestjs/common';
import { CurrentActor } from '../../http/access.js';
import type { Actor } from '../../common/actor.js';
import type { Request } from 'express';
import { Public, SignedIn } from '../../common/auth-policy.decorator.js';
import { SignedInUser, signedInUserOf } from '../page-context.js';
import { InvitationResponsesService } from '../../invitations/invitation-responses.service.js';
import { TeamsService } from '../../teams/teams.service.js';
import type { User } from '../../users/user.entity.js';
import { apiExamples } from './api-examples.js';

@Controller()
/** The home page's redirect and the signed-in person's dashboard. */
export class DashboardController {
  constructor(
    private readonly teams: TeamsService,
    private readonly invitations: InvitationResponsesService,
  ) {}

  /** The signed-in go to their dashboard, everyone else to the sign-in page. */
  @Get()
  @Public()
  @Redirect('/login', 303)
  home(@Req() req: Request): { url: string } {
    return { url: signedInUserOf(req) ? '/dashboard' : '/login' };
  }

  @Get('dashboard')
  @SignedIn()
  @Render('dashboard/index')
  async dashboard(
    @CurrentActor() actor: Actor,
    @SignedInUser() user: User,
    @Req() req: Request,
  ): Promise<object> {
    const [team, invitations] = await Promise.all([
      this.teams.getCurrentTeam(actor),
      this.invitations.pendingFor(user),
    ]);
    const apiBase = `${req.protocol}://${req.get('host')}`;
    return { title: 'Dashboard', user, team, invitations, apiBase };
  }

  /** The API's base URL and a curl line for each endpoint, beside the API docs. */
  @Get('use-the-api')
  @SignedIn()
  @Render('dashboard/use-the-api')
  useTheApi(@Req() req: Request): object {
    const apiBase = `${req.protocol}://${req.get('host')}`;
    return { title: 'Use the API', apiBase, endpoints: apiExamples(apiBase) };
  }
}
