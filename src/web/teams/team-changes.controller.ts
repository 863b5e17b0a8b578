import { Controller, Get, HttpCode, Post, Render } from '@nestjs/common';
import { CurrentActor } from '../../http/access.js';
import type { Actor } from '../../common/actor.js';
import { SignedIn } from '../../common/auth-policy.decorator.js';
import { IdParam } from '../../common/decorators/id-param.decorator.js';
import { Form } from '../../common/validation/form.decorator.js';
import { FormPage } from '../form-page.js';
import { AbilityCatalog } from '../../config/abilities.config.js';
import { policyInputOf, TeamPolicyForm } from './teams.forms.js';
import { TeamTokensService } from '../../team-tokens/team-tokens.service.js';

/**
 * Changes to a team that can stop tokens working, shown before they are made: a new policy
 * (which tokens it refuses, whose), and a member's removal (which of their tokens stop acting
 * in the team). Each page's form then makes the change on its own route.
 */
@Controller('teams')
@SignedIn()
export class TeamChangesController {
  constructor(
    private readonly inventory: TeamTokensService,
    private readonly catalog: AbilityCatalog,
  ) {}

  @Post(':id/policy/preview')
  @HttpCode(200)
  @FormPage('/teams/:id')
  @Render('teams/policy-preview')
  async policy(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @Form() form: TeamPolicyForm,
  ): Promise<object> {
    const preview = await this.inventory.policyPreview(actor, id, policyInputOf(form));
    const allowed = preview.policy.allowedAbilities ?? this.catalog.names();
    return { title: `The new policy of ${preview.team.name}`, ...preview, allowed };
  }

  @Get(':id/members/:userId/remove')
  @Render('teams/remove-member')
  async removal(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @IdParam('userId') userId: number,
  ): Promise<object> {
    const preview = await this.inventory.removalPreview(actor, id, userId);
    return { title: `Remove ${preview.member.user.name}`, ...preview };
  }
}
