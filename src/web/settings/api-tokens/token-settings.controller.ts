import { Controller, Get, HttpCode, Post, Redirect, Render, Session } from '@nestjs/common';
import { Form } from '../../../common/validation/form.decorator.js';
import { CurrentActor } from '../../../http/access.js';
import type { Actor } from '../../../common/actor.js';
import type { PageSession } from '../../session/page-session.js';
import { SignedIn } from '../../../common/auth-policy.decorator.js';
import { AbilityCatalog } from '../../../config/abilities.config.js';
import { IdParam } from '../../../common/decorators/id-param.decorator.js';
import { flash } from '../../flash.js';
import { FormPage } from '../../form-page.js';
import { RequireRecentPassword } from '../../sudo-mode.js';
import {
  lifetimeDaysOf,
  MAX_GRACE_MINUTES,
  RegenerateTokenForm,
  UpdateTokenForm,
} from './tokens.forms.js';
import { TokenDetailsService } from '../../../tokens/token-details.service.js';
import { TokenRegenerationService } from '../../../tokens/token-regeneration.service.js';
import { TokensService } from '../../../tokens/tokens.service.js';

const TOKEN_PAGE = '/settings/api-tokens/:id';

/** One token's page: its details and usage, editing it, and regenerating its value. */
@Controller('settings/api-tokens')
@SignedIn()
export class TokenSettingsController {
  constructor(
    private readonly tokens: TokensService,
    private readonly regeneration: TokenRegenerationService,
    private readonly details: TokenDetailsService,
    private readonly catalog: AbilityCatalog,
  ) {}

  @Get(':id')
  @Render('tokens/show')
  show(@CurrentActor() actor: Actor, @IdParam() id: number): Promise<object> {
    return this.page(actor, id);
  }

  @Post(':id')
  @FormPage(TOKEN_PAGE)
  @Redirect(undefined, 303)
  async update(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @Form() form: UpdateTokenForm,
    @Session() session: PageSession,
  ): Promise<{ url: string }> {
    const token = await this.tokens.update(actor, id, form);
    flash(session, { notice: `Token "${token.name}" was saved. Its value did not change.` });
    return { url: `/settings/api-tokens/${id}` };
  }

  /**
   * Sudo mode. The new value is shown in the answer to this POST and nowhere else, as when a
   * token is created.
   */
  @Post(':id/regenerate')
  @HttpCode(200)
  @FormPage(TOKEN_PAGE)
  @RequireRecentPassword('Regenerate the token')
  @Render('tokens/show')
  async regenerate(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @Form() form: RegenerateTokenForm,
  ): Promise<object> {
    const version = form.version === undefined ? undefined : Number(form.version);
    const { plaintext } = await this.regeneration.regenerate(
      actor,
      id,
      form.grace_minutes,
      version,
      lifetimeDaysOf(form.lifetime),
    );
    return this.page(actor, id, plaintext);
  }

  private async page(actor: Actor, id: number, newValue?: string): Promise<object> {
    // The token and the team it acts in are read once, for its details and its lifetimes.
    const own = await this.tokens.ownToken(actor, id);
    const details = await this.details.get(actor, id, own.token);
    const lifetimes = this.regeneration.lifetimeChoicesOf(own);
    return {
      title: details.token.name,
      ...details,
      lifetimes,
      newValue,
      tokenPath: `/settings/api-tokens/${id}`,
      allAbilities: this.catalog.names(),
      maxGraceMinutes: MAX_GRACE_MINUTES,
    };
  }
}
