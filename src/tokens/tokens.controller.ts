import { Body, Controller, Get, Post, Redirect, Render, Session } from '@nestjs/common';
import type { SessionData } from 'express-session';
import { SignedIn } from '../auth/auth-policy.decorator.js';
import { IdParam } from '../common/decorators/id-param.decorator.js';
import { SignedInUser } from '../common/decorators/signed-in-user.decorator.js';
import { flash } from '../common/web/flash.js';
import { FormPage } from '../common/web/form-page.js';
import type { User } from '../users/user.entity.js';
import { ABILITIES } from './abilities.js';
import { CreateTokenForm, EXPIRY_CHOICES, toCreateTokenDto } from './dto/create-token.form.js';
import { TokenReveal } from './token-reveal.js';
import { TokensService } from './tokens.service.js';

const PAGE = '/settings/api-tokens';

/** Account Settings > API Tokens. */
@Controller('settings/api-tokens')
@SignedIn()
export class TokensController {
  constructor(
    private readonly tokens: TokensService,
    private readonly reveal: TokenReveal,
  ) {}

  @Get()
  @Render('tokens/index')
  async index(@SignedInUser() user: User, @Session() session: SessionData): Promise<object> {
    return {
      title: 'API Tokens',
      tokens: await this.tokens.listActive(user.id),
      newToken: this.reveal.take(session),
      abilities: ABILITIES,
      expiryChoices: EXPIRY_CHOICES,
    };
  }

  @Post()
  @FormPage(PAGE)
  @Redirect(PAGE, 303)
  async create(
    @SignedInUser() user: User,
    @Body() form: CreateTokenForm,
    @Session() session: SessionData,
  ): Promise<void> {
    this.reveal.put(session, await this.tokens.create(user.id, toCreateTokenDto(form)));
  }

  @Post(':id/revoke')
  @Redirect(PAGE, 303)
  async revoke(
    @SignedInUser() user: User,
    @IdParam() id: number,
    @Session() session: SessionData,
  ): Promise<void> {
    const { token } = await this.tokens.revoke(user.id, id);
    flash(session, {
      notice: `Token "${token.name}" was revoked. Requests using it are refused from now on.`,
    });
  }
}
