import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log.js';
import { Clock } from '../clock/clock.js';
import { Actors, type Actor } from '../common/actor.js';
import { Transactions } from '../database/transactions.js';
import { TeamsService } from '../teams/teams.service.js';
import { manageableBy } from './webhook-access.js';
import type { WebhookEndpoint } from './webhook-endpoint.entity.js';
import { WebhookSecrets, secretVersionOf } from './webhook-secrets.js';
import { newSigningSecret } from './webhook-signature.js';
import { WebhooksRepository } from './webhooks.repository.js';
import {
  ConfiguredEndpointError,
  WebhookEndpointNotFoundError,
  WebhookSecretChangedError,
} from './webhooks.errors.js';

export interface RotatedSecret {
  endpoint: WebhookEndpoint;
  /** The new signing secret, shown this once. */
  secret: string;
  /** Until when the replaced secret signs too. */
  previousSignsUntil: Date;
}

/** How long the secret a rotation replaces keeps signing, beside the new one. */
export const PREVIOUS_SECRET_SIGNS_MS = 24 * 3_600_000;

/**
 * A webhook endpoint's or audit stream's signing secret, replaced: by the team's owners and
 * admins from its page, by the operator from the command line. An endpoint named in the
 * configuration keeps the secret the configuration gives it.
 */
@Injectable()
export class WebhookSecretRotationService {
  constructor(
    private readonly teams: TeamsService,
    private readonly repository: WebhooksRepository,
    private readonly secrets: WebhookSecrets,
    private readonly transactions: Transactions,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  /**
   * Gives the endpoint a new signing secret, returned this once; the one it replaces keeps
   * signing beside it for PREVIOUS_SECRET_SIGNS_MS, so at most two secrets sign. `version`
   * (secretVersionOf, what the page showed) makes a click rotate once: when the secret is no
   * longer that one, or another rotation commits first, nothing changes and it says so.
   */
  async rotateSecret(
    actor: Actor,
    teamId: number | null,
    endpointId: number,
    version?: string,
  ): Promise<RotatedSecret> {
    const { team } = await manageableBy(this.teams, actor, teamId);
    return this.transactions.run(async (m) => {
      if (team) await this.teams.certifyManager(m, actor, team.id);
      const endpoint = await this.repository.findInTeam(m, team?.id ?? null, endpointId);
      if (!endpoint) throw new WebhookEndpointNotFoundError();
      return this.rotate(m, actor, endpoint, version);
    });
  }

  /** Rotates any endpoint's secret by its id, for the operator (`webhook:rotate-secret`). */
  async rotateSecretForOperator(endpointId: number): Promise<RotatedSecret> {
    return this.transactions.run(async (m) => {
      const endpoint = await this.repository.findById(m, endpointId);
      if (!endpoint) throw new WebhookEndpointNotFoundError();
      return this.rotate(m, Actors.operator(), endpoint);
    });
  }

  private async rotate(
    m: EntityManager,
    actor: Actor,
    endpoint: WebhookEndpoint,
    version?: string,
  ): Promise<RotatedSecret> {
    if (endpoint.configKey) throw new ConfiguredEndpointError('secret');
    if (version !== undefined && version !== secretVersionOf(endpoint)) {
      throw new WebhookSecretChangedError();
    }
    const secret = newSigningSecret();
    const previousSignsUntil = new Date(this.clock.nowMs() + PREVIOUS_SECRET_SIGNS_MS);
    const sealed = this.secrets.seal(endpoint.uid, secret);
    const next = { secret: sealed, previousSecretUntil: previousSignsUntil };
    if (!(await this.repository.replaceSecret(m, endpoint.id, endpoint.secret, next))) {
      throw new WebhookSecretChangedError();
    }
    this.audit.recordIn(m, actor, {
      event: 'webhook.secret_rotated',
      teamId: endpoint.teamId,
      target: { type: 'webhook', id: endpoint.id },
      detail: { url: endpoint.url, previous_signs_until: previousSignsUntil.toISOString() },
    });
    const rotated = { ...endpoint, ...next, previousSecret: endpoint.secret };
    return { endpoint: rotated, secret, previousSignsUntil };
  }
}
