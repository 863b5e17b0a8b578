import { Controller, Post, Redirect, Session } from '@nestjs/common';
import { Form } from '../../common/validation/form.decorator.js';
import { CurrentActor } from '../../http/access.js';
import type { Actor } from '../../common/actor.js';
import type { PageSession } from '../session/page-session.js';
import { SignedIn } from '../../common/auth-policy.decorator.js';
import { IdParam } from '../../common/decorators/id-param.decorator.js';
import { flash } from '../flash.js';
import { FormPage } from '../form-page.js';
import { RequireRecentPassword } from '../sudo-mode.js';
import { CreateTeamDto } from '../../teams/dto/create-team.dto.js';
import { ChangeRoleForm, policyInputOf, TeamPolicyForm, TransferTeamForm } from './teams.forms.js';
import { TeamMembersService } from '../../teams/team-members.service.js';
import { TeamPoliciesService } from '../../teams/team-policies.service.js';
import { TeamsService } from '../../teams/teams.service.js';

/**
 * A team's settings, on its page: its name, its members' roles, its ownership, leaving it and
 * deleting it. Transfer and deletion need the password typed in the last 15 minutes.
 */
@Controller('teams')
@SignedIn()
export class TeamSettingsController {
  constructor(
    private readonly teams: TeamsService,
    private readonly members: TeamMembersService,
    private readonly policies: TeamPoliciesService,
  ) {}

  @Post(':id')
  @FormPage('/teams/:id')
  @Redirect(undefined, 303)
  async rename(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @Form() form: CreateTeamDto,
    @Session() session: PageSession,
  ): Promise<{ url: string }> {
    const team = await this.teams.rename(actor, id, form);
    flash(session, { notice: `The team is now called "${team.name}".` });
    return { url: `/teams/${id}` };
  }

  @Post(':id/members/:userId/role')
  @FormPage('/teams/:id')
  @Redirect(undefined, 303)
  async changeRole(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @IdParam('userId') userId: number,
    @Form() form: ChangeRoleForm,
    @Session() session: PageSession,
  ): Promise<{ url: string }> {
    const member = await this.members.changeRole(actor, id, userId, form.role);
    flash(session, {
      notice: `${member.name} is now ${form.role === 'admin' ? 'an admin' : 'a member'}.`,
    });
    return { url: `/teams/${id}` };
  }

  @Post(':id/transfer')
  @FormPage('/teams/:id')
  @RequireRecentPassword('Hand the team to its new owner')
  @Redirect(undefined, 303)
  async transfer(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @Form() form: TransferTeamForm,
    @Session() session: PageSession,
  ): Promise<{ url: string }> {
    const owner = await this.members.transfer(actor, id, form.user_id);
    flash(session, { notice: `${owner.name} now owns the team; you are an admin.` });
    return { url: `/teams/${id}` };
  }

  /** The owner's policy for the team (its effect shown first: /teams/:id/policy/preview); sudo mode. */
  @Post(':id/policy')
  @FormPage('/teams/:id')
  @RequireRecentPassword("Change the team's policy")
  @Redirect(undefined, 303)
  async policy(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @Form() form: TeamPolicyForm,
    @Session() session: PageSession,
  ): Promise<{ url: string }> {
    const team = await this.policies.setPolicy(actor, id, policyInputOf(form));
    flash(session, {
      notice: `The policy of ${team.name} was saved. It applies to the next API request of every token acting in the team.`,
    });
    return { url: `/teams/${id}` };
  }

  @Post(':id/leave')
  @FormPage('/teams/:id')
  @Redirect('/teams', 303)
  async leave(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @Session() session: PageSession,
  ): Promise<void> {
    await this.members.leave(actor, id);
    flash(session, { notice: 'You left the team.' });
  }

  @Post(':id/delete')
  @FormPage('/teams/:id')
  @RequireRecentPassword('Delete the team')
  @Redirect('/teams', 303)
  async delete(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @Session() session: PageSession,
  ): Promise<void> {
    const team = await this.teams.deleteTeam(actor, id);
    flash(session, { notice: `Team "${team.name}" was deleted.` });
  }
}
