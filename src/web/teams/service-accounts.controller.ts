import { Controller, Get, HttpCode, Post, Redirect, Render, Session } from '@nestjs/common';
import type { PageSession } from '../session/page-session.js';
import { CurrentActor } from '../../http/access.js';
import { RequireRecentPassword } from '../sudo-mode.js';
import type { Actor } from '../../common/actor.js';
import { SignedIn } from '../../common/auth-policy.decorator.js';
import { IdParam } from '../../common/decorators/id-param.decorator.js';
import { Form } from '../../common/validation/form.decorator.js';
import { flash } from '../flash.js';
import { FormPage } from '../form-page.js';
import { CreateServiceAccountForm } from '../../service-accounts/dto/service-accounts.forms.js';
import { ServiceAccountsService } from '../../service-accounts/service-accounts.service.js';
import { NewTokenForm, toCreateTokenDto } from '../settings/api-tokens/tokens.forms.js';
import { TeamTokensService } from '../../team-tokens/team-tokens.service.js';

const LIST = '/teams/:id/service-accounts';
const PAGE = '/teams/:id/service-accounts/:accountId';

/**
 * A team's service accounts, for its owners and admins: the list and making one, an account's
 * page with its tokens, making (shown once) and revoking them, and deleting the account.
 */
@Controller('teams')
@SignedIn()
export class ServiceAccountsController {
  constructor(
    private readonly accounts: ServiceAccountsService,
    private readonly inventory: TeamTokensService,
  ) {}

  @Get(':id/service-accounts')
  @Render('teams/service-accounts/index')
  async index(@CurrentActor() actor: Actor, @IdParam() id: number): Promise<object> {
    const list = await this.accounts.list(actor, id);
    return { title: `Service accounts of ${list.team.name}`, ...list };
  }

  @Post(':id/service-accounts')
  @FormPage(LIST)
  @RequireRecentPassword('Create the service account')
  @Redirect(undefined, 303)
  async create(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @Form() form: CreateServiceAccountForm,
    @Session() session: PageSession,
  ): Promise<{ url: string }> {
    const account = await this.accounts.create(actor, id, form);
    flash(session, {
      notice: `The service account ${account.name} was created. Give it a token below: nobody signs in to it.`,
    });
    return { url: `/teams/${id}/service-accounts/${account.id}` };
  }

  @Get(':id/service-accounts/:accountId')
  @Render('teams/service-accounts/show')
  show(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @IdParam('accountId') accountId: number,
  ): Promise<object> {
    return this.page(actor, id, accountId);
  }

  /** The new token is shown in the answer to this POST, once, and kept nowhere. */
  @Post(':id/service-accounts/:accountId/tokens')
  @HttpCode(200)
  @FormPage(PAGE)
  @RequireRecentPassword("Create the service account's token")
  @Render('teams/service-accounts/show')
  async createToken(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @IdParam('accountId') accountId: number,
    @Form() form: NewTokenForm,
  ): Promise<object> {
    const created = await this.accounts.createToken(actor, id, accountId, toCreateTokenDto(form));
    const newToken = { name: created.token.name, plaintext: created.plaintext };
    return this.page(actor, id, accountId, newToken);
  }

  @Post(':id/service-accounts/:accountId/tokens/:tokenId/revoke')
  @FormPage(PAGE)
  @Redirect(undefined, 303)
  async revokeToken(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @IdParam('accountId') accountId: number,
    @IdParam('tokenId') tokenId: number,
    @Session() session: PageSession,
  ): Promise<{ url: string }> {
    const token = await this.inventory.revoke(actor, id, tokenId, accountId);
    flash(session, {
      notice: `The token "${token.name}" was revoked: the API refuses it from the next request.`,
    });
    return { url: `/teams/${id}/service-accounts/${accountId}` };
  }

  @Post(':id/service-accounts/:accountId/delete')
  @FormPage(PAGE)
  @RequireRecentPassword('Delete the service account')
  @Redirect(undefined, 303)
  async delete(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @IdParam('accountId') accountId: number,
    @Session() session: PageSession,
  ): Promise<{ url: string }> {
    const account = await this.accounts.delete(actor, id, accountId);
    flash(session, {
      notice: `The service account ${account.name} was deleted: the API refuses its tokens from the next request.`,
    });
    return { url: `/teams/${id}/service-accounts` };
  }

  private async page(
    actor: Actor,
    id: number,
    accountId: number,
    newToken?: { name: string; plaintext: string },
  ): Promise<object> {
    const details = await this.accounts.get(actor, id, accountId);
    const pagePath = `/teams/${id}/service-accounts/${accountId}`;
    return { title: details.account.name, ...details, newToken, pagePath };
  }
}
