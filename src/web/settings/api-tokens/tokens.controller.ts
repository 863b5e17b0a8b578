import { Controller, Get, HttpCode, Post, Redirect, Render, Session } from '@nestjs/common';
import { Form } from '../../../common/validation/form.decorator.js';
import { CurrentActor } from '../../../http/access.js';
import type { Actor } from '../../../common/actor.js';
import type { PageSession } from '../../session/page-session.js';
import { SignedIn } from '../../../common/auth-policy.decorator.js';
import { IdParam } from '../../../common/decorators/id-param.decorator.js';
import { SignedInUser } from '../../page-context.js';
import { flash } from '../../flash.js';
import { FormPage } from '../../form-page.js';
import type { User } from '../../../users/user.entity.js';
import { CreateTokenForm, toCreateTokenDto } from './tokens.forms.js';
import { EmailVerificationService } from '../../../email-verification/email-verification.service.js';
import { TokenLifetimes } from '../../../tokens/token-lifetimes.js';
import { TokensService } from '../../../tokens/tokens.service.js';

const PAGE = '/settings/api-tokens';

/** Account Settings > API Tokens: the list, creating and revoking (token-settings.controller.ts: one token). */
@Controller('settings/api-tokens')
@SignedIn()
export class TokensController {
  constructor(
    private readonly tokens: TokensService,
    private readonly lifetimes: TokenLifetimes,
    private readonly verification: EmailVerificationService,
  ) {}

  @Get()
  @Render('tokens/index')
  index(@CurrentActor() actor: Actor, @SignedInUser() user: User): Promise<object> {
    return this.page(actor, user);
  }

  /**
   * The new token is shown in the answer to this POST itself, and nowhere else: it is never kept,
   * not even in the session, and two tokens created at once each show in their own answer.
   */
  @Post()
  @HttpCode(200)
  @FormPage(PAGE)
  @Render('tokens/index')
  async create(
    @CurrentActor() actor: Actor,
    @SignedInUser() user: User,
    @Form() form: CreateTokenForm,
  ): Promise<object> {
    const created = await this.tokens.create(actor, toCreateTokenDto(form));
    return this.page(actor, user, {
      id: created.token.id,
      name: created.token.name,
      plaintext: created.plaintext,
    });
  }

  @Post(':id/revoke')
  @Redirect(PAGE, 303)
  async revoke(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @Session() session: PageSession,
  ): Promise<void> {
    const { token } = await this.tokens.revoke(actor, id);
    flash(session, {
      notice: `Token "${token.name}" was revoked. Requests using it are refused from now on.`,
    });
  }

  private async page(
    actor: Actor,
    user: User,
    newToken?: { id: number; name: string; plaintext: string },
  ): Promise<object> {
    const [{ active, history }, creation, offered] = await Promise.all([
      this.tokens.list(actor),
      this.lifetimes.creationChoices(actor),
      this.tokens.offeredAbilities(actor),
    ]);
    return {
      title: 'API Tokens',
      tokens: active,
      history,
      newToken,
      abilities: offered.abilities,
      abilitiesLimitedBy: offered.limitedBy,
      // Where a new token may act (following the current team, or pinned to one team), and the
      // expiries each allows.
      creation,
      // Until the address is confirmed the page says why no token can be made, and offers a link.
      verificationPending: this.verification.isPending(user),
    };
  }
}
