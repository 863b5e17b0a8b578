import { Controller, Get, Post, Redirect, Render, Session } from '@nestjs/common';
import type { PageSession } from '../session/page-session.js';
import { CurrentActor } from '../../http/access.js';
import type { Actor } from '../../common/actor.js';
import { SignedIn } from '../../common/auth-policy.decorator.js';
import { IdParam } from '../../common/decorators/id-param.decorator.js';
import { flash } from '../flash.js';
import { FormPage } from '../form-page.js';
import { TeamTokensService } from '../../team-tokens/team-tokens.service.js';

const INVENTORY = '/teams/:id/tokens';

/** A team's token inventory, for its owners and admins: what can act in the team, and revoking. */
@Controller('teams')
@SignedIn()
export class TeamTokensController {
  constructor(private readonly inventory: TeamTokensService) {}

  @Get(':id/tokens')
  @Render('teams/tokens')
  async index(@CurrentActor() actor: Actor, @IdParam() id: number): Promise<object> {
    const inventory = await this.inventory.inventory(actor, id);
    return { title: `Tokens of ${inventory.team.name}`, ...inventory };
  }

  @Post(':id/tokens/:tokenId/revoke')
  @FormPage(INVENTORY)
  @Redirect(undefined, 303)
  async revoke(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @IdParam('tokenId') tokenId: number,
    @Session() session: PageSession,
  ): Promise<{ url: string }> {
    const token = await this.inventory.revoke(actor, id, tokenId);
    const told = token.person.serviceAccount ? '' : ` ${token.person.name} was told by mail.`;
    flash(session, {
      notice: `The token "${token.name}" of ${token.person.name} was revoked: the API refuses it from the next request.${told}`,
    });
    return { url: `/teams/${id}/tokens` };
  }
}
