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
import {
  CreateAuditStreamForm,
  CreateWebhookForm,
  RotateWebhookSecretForm,
} from './webhooks.forms.js';
import { webhookListView, webhookPageView } from '../../webhooks/webhook.view.js';
import { WebhookSecretRotationService } from '../../webhooks/webhook-secret-rotation.service.js';
import { WebhooksService } from '../../webhooks/webhooks.service.js';

const LIST = '/teams/:id/webhooks';
const PAGE = '/teams/:id/webhooks/:hookId';

/**
 * A team's webhook endpoints, for its owners and admins: the list and adding one, or an audit
 * stream (its signing secret shown once, in the answer), an endpoint's page with its delivery log, a test event,
 * and deleting it. Changes ask for the password when it was not typed lately.
 */
@Controller('teams')
@SignedIn()
export class WebhooksController {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly rotation: WebhookSecretRotationService,
  ) {}

  @Get(':id/webhooks')
  @Render('teams/webhooks/index')
  async index(@CurrentActor() actor: Actor, @IdParam() id: number): Promise<object> {
    return webhookListView(await this.webhooks.list(actor, id));
  }

  /** The new endpoint's secret is shown in the answer to this POST, once, and kept nowhere. */
  @Post(':id/webhooks')
  @HttpCode(200)
  @FormPage(LIST)
  @RequireRecentPassword('Add the webhook endpoint')
  @Render('teams/webhooks/index')
  async create(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @Form() form: CreateWebhookForm,
  ): Promise<object> {
    const created = await this.webhooks.create(actor, id, form);
    return webhookListView(await this.webhooks.list(actor, id), created);
  }

  /** An audit stream: like an endpoint, its signing secret is shown in the answer, once. */
  @Post(':id/webhooks/audit-stream')
  @HttpCode(200)
  @FormPage(LIST)
  @RequireRecentPassword('Add the audit stream', { secretFields: ['authorization'] })
  @Render('teams/webhooks/index')
  async createAuditStream(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @Form() form: CreateAuditStreamForm,
  ): Promise<object> {
    const created = await this.webhooks.createAuditStream(actor, id, form);
    return webhookListView(await this.webhooks.list(actor, id), created);
  }

  @Get(':id/webhooks/:hookId')
  @Render('teams/webhooks/show')
  async show(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @IdParam('hookId') hookId: number,
  ): Promise<object> {
    return webhookPageView(await this.webhooks.get(actor, id, hookId));
  }

  /** The new secret is shown in the answer to this POST, once; the previous one signs a day more. */
  @Post(':id/webhooks/:hookId/rotate-secret')
  @HttpCode(200)
  @FormPage(PAGE)
  @RequireRecentPassword('Rotate the signing secret')
  @Render('teams/webhooks/show')
  async rotateSecret(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @IdParam('hookId') hookId: number,
    @Form() form: RotateWebhookSecretForm,
  ): Promise<object> {
    const rotated = await this.rotation.rotateSecret(actor, id, hookId, form.version);
    return webhookPageView(await this.webhooks.get(actor, id, hookId), rotated);
  }

  @Post(':id/webhooks/:hookId/test')
  @FormPage(PAGE)
  @Redirect(undefined, 303)
  async test(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @IdParam('hookId') hookId: number,
    @Session() session: PageSession,
  ): Promise<{ url: string }> {
    const messageId = await this.webhooks.sendTest(actor, id, hookId);
    flash(session, { notice: `A test event (${messageId}) is on its way: see it below.` });
    return { url: `/teams/${id}/webhooks/${hookId}` };
  }

  @Post(':id/webhooks/:hookId/deliveries/:deliveryId/replay')
  @FormPage(PAGE)
  @Redirect(undefined, 303)
  async replay(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @IdParam('hookId') hookId: number,
    @IdParam('deliveryId') deliveryId: number,
    @Session() session: PageSession,
  ): Promise<{ url: string }> {
    await this.webhooks.replay(actor, id, hookId, deliveryId);
    flash(session, { notice: 'The delivery is sent again, with the same webhook-id.' });
    return { url: `/teams/${id}/webhooks/${hookId}` };
  }

  @Post(':id/webhooks/:hookId/delete')
  @FormPage(PAGE)
  @RequireRecentPassword('Delete the webhook endpoint')
  @Redirect(undefined, 303)
  async delete(
    @CurrentActor() actor: Actor,
    @IdParam() id: number,
    @IdParam('hookId') hookId: number,
    @Session() session: PageSession,
  ): Promise<{ url: string }> {
    const endpoint = await this.webhooks.delete(actor, id, hookId);
    flash(session, {
      notice: `The endpoint ${endpoint.url} was deleted: nothing more is sent to it.`,
    });
    return { url: `/teams/${id}/webhooks` };
  }
}
