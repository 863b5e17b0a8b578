import { Controller, Get, Post, Redirect, Render, Session } from '@nestjs/common';
import { Form } from '../../common/validation/form.decorator.js';
import { CurrentActor } from '../../http/access.js';
import type { Actor } from '../../common/actor.js';
import type { PageSession } from '../session/page-session.js';
import { SignedIn } from '../../common/auth-policy.decorator.js';
import { IdParam } from '../../common/decorators/id-param.decorator.js';
import { SignedInUser } from '../page-context.js';
import { flash } from '../flash.js';
import { FormPage } from '../form-page.js';
import { isReturnPage } from '../return-to.js';
import type { User } from '../../users/user.entity.js';
import { CreateTeamDto } from '../../teams/dto/create-team.dto.js';
import { SwitchTeamForm } from './teams.forms.js';
import { TeamMembersService } from '../../teams/team-members.service.js';
import { TeamsService } from '../../teams/teams.service.js';

/** The teams a person belongs to, and each team's members. */
@Controller('teams')
@SignedIn()
export class TeamsController {
  constructor(
    private readonly teams: TeamsService,
    private readonly members: TeamMembersService,
  ) {}

  @Get()
  @Render('teams/index')
  async index(@CurrentActor() actor: Actor): Promise<object> {
    return { title: 'Teams', memberships: await this.teams.listForUser(actor) };
  }

  /** On to the new team's page, where people are invited. */
  @Post()
  @FormPage('/teams')
  @Redirect('/teams', 303)
  async create(
    @CurrentActor() actor: Actor,
    @Form() form: CreateTeamDto,
    @Session() session: PageSession,
  ): Promise<{ url: string }> {
    const team = await this.teams.createTeam(actor, form);
    flash(session, {
      notice: `Team "${team.name}" was created and is now your current team. Invite people below.`,
    });
    return { url: `/teams/${team.id}` };
  }

  @Post('switch')
  @FormPage('/teams')
  @Redirect('/teams', 303)
  async switch(
    @CurrentActor() actor: Actor,
    @Form() form: SwitchTeamForm,
    @Session() session: PageSession,
  ): Promise<{ url: string }> {
    const team = await this.teams.switchTeam(actor, form.team_id);
    flash(session, { notice: `You now work in "${team.name}".` });
    return { url: isReturnPage(form.return_to) ? form.return_to : '/teams' };
  }

  @Post(':id/members/:userId/remove')
  @Redirect(undefined, 303)
  async removeMember(
    @CurrentActor() actor: Actor,
    @SignedInUser() user: User,
    @IdParam() id: number,
    @IdParam('userId') userId: number,
    @Session() session: PageSession,
  ): Promise<{ url: string }> {
    await this.members.removeMember(actor, id, userId);
    const left = userId === user.id;
    flash(session, { notice: left ? 'You left the team.' : 'The member was removed.' });
    return { url: left ? '/teams' : `/teams/${id}` };
  }
}
