import { Inject, Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log.js';
import { Actors } from '../common/actor.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import type { MailMessage } from '../mail/mail-message.js';
import { ComposesMail, Mailer } from '../mail/mailer.js';
import type { WebhookEndpoint } from './webhook-endpoint.entity.js';
import { WebhooksRepository } from './webhooks.repository.js';

/** An endpoint whose deliveries have all failed for this long is disabled. */
export const DISABLE_AFTER_FAILING_MS = 5 * 86_400_000;
const DISABLED_MAIL = 'webhook-disabled';

/**
 * Disables an endpoint that answered 410 Gone, or whose deliveries have failed for
 * DISABLE_AFTER_FAILING_MS without one success, once (a conditional update decides between
 * instances), recording it and mailing the team's owners.
 */
@Injectable()
export class EndpointHealth {
  private readonly logger = new Logger('Webhooks');

  constructor(
    private readonly repository: WebhooksRepository,
    private readonly mailer: Mailer,
    private readonly audit: AuditLog,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  /**
   * Disables the endpoint when the failure calls for it; whether it is disabled now (by this
   * failure, or by another instance's a moment before).
   */
  async afterFailure(
    manager: EntityManager,
    endpoint: WebhookEndpoint,
    gone: boolean,
    now: Date,
  ): Promise<boolean> {
    const since = endpoint.failingSince ?? now;
    const tooLong = now.getTime() - since.getTime() >= DISABLE_AFTER_FAILING_MS;
    if (!gone && !tooLong) return false;
    const reason = gone ? 'the endpoint answered 410 Gone' : 'every delivery failed for 5 days';
    if (!(await this.repository.disable(manager, endpoint.id, reason))) return true;
    await this.repository.buryPending(manager, endpoint.id, now);
    this.logger.warn(`Disabled webhook endpoint ${endpoint.id} (${endpoint.url}): ${reason}`);
    this.audit.recordIn(manager, Actors.system, {
      event: 'webhook.disabled',
      userId: null,
      teamId: endpoint.teamId,
      target: { type: 'webhook', id: endpoint.id },
      detail: { url: endpoint.url, reason },
    });
    if (endpoint.teamId === null) return true;
    for (const owner of await this.repository.ownersOf(manager, endpoint.teamId)) {
      await this.mailer.send(manager, DISABLED_MAIL, owner.email, {
        endpointId: endpoint.id,
        teamId: endpoint.teamId,
        name: owner.name,
        reason,
      });
    }
    return true;
  }

  @ComposesMail(DISABLED_MAIL)
  private async compose(
    manager: EntityManager,
    request: { to: string; params: Record<string, unknown> },
  ): Promise<MailMessage | null> {
    const endpoint = await this.repository.findById(manager, Number(request.params.endpointId));
    if (!endpoint || endpoint.status !== 'disabled') return null;
    const pageUrl = `${this.config.app.publicUrl}/teams/${endpoint.teamId}/webhooks/${endpoint.id}`;
    return {
      to: request.to,
      subject: 'A webhook endpoint of your team was disabled',
      ...this.mailer.render('webhook-disabled', {
        name: String(request.params.name ?? ''),
        url: endpoint.url,
        reason: String(request.params.reason ?? ''),
        pageUrl,
      }),
    };
  }
}
