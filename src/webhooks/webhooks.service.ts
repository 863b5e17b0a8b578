import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log.js';
import { Clock } from '../clock/clock.js';
import { accountOf, type Actor } from '../common/actor.js';
import { checkedTogether, ValidationError } from '../common/errors/domain.error.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { Transactions } from '../database/transactions.js';
import type { Team } from '../teams/team.entity.js';
import type { TeamRole } from '../teams/team-member.entity.js';
import { TeamsService } from '../teams/teams.service.js';
import { AddressPolicy, RefusedAddressError } from './address-policy.js';
import type { WebhookDelivery } from './webhook-delivery.entity.js';
import type { EndpointKind, WebhookEndpoint } from './webhook-endpoint.entity.js';
import {
  TEST_EVENT,
  WEBHOOK_EVENT_TYPES,
  isWebhookEventType,
  type WebhookEventType,
} from './webhook-events.js';
import { WebhookOutbox } from './webhook-outbox.js';
import { WebhookSecrets } from './webhook-secrets.js';
import { newSigningSecret } from './webhook-signature.js';
import { WebhooksRepository } from './webhooks.repository.js';
import {
  WebhookDeliveryNotFoundError,
  WebhookEndpointNotFoundError,
  WebhookEndpointLimitError,
  ConfiguredEndpointError,
} from './webhooks.errors.js';
import { acceptableAuthorization } from './audit-stream-authorization.js';
import { manageableBy } from './webhook-access.js';
import { Events } from '../events/events.js';
import { AccountLimiter } from '../rate-limit/account-limiter.js';

/** The longest URL an endpoint keeps (its column's length), as the URL parser writes it. */
export const URL_MAX = 2048;

/** How many deliveries an endpoint's page and `webhook:deliveries` show. */
export const DELIVERY_LOG_LENGTH = 50;

export interface NewEndpointInput {
  url: string;
  events: string[];
}

export interface NewAuditStreamInput {
  url: string;
  /** The Authorization header's value its collector wants (`Splunk <token>`, say); optional. */
  authorization?: string | null;
}

export interface CreatedEndpoint {
  endpoint: WebhookEndpoint;
  /** The signing secret, shown this once. */
  secret: string;
}

export interface EndpointList {
  team: Team | null;
  role: TeamRole | null;
  endpoints: WebhookEndpoint[];
  /** How many the team may have (WEBHOOK_ENDPOINTS_PER_TEAM); null for the operator's. */
  limit: number | null;
}

export interface EndpointDetails {
  team: Team | null;
  role: TeamRole | null;
  endpoint: WebhookEndpoint;
  deliveries: WebhookDelivery[];
  /** Until when the secret a rotation replaced still signs too; null when it no longer does. */
  previousSignsUntil: Date | null;
}

/**
 * A team's webhook endpoints, for its owners and admins (and the operator's, for every team's
 * events, with no team): registering one (its secret shown once), its delivery log, a test
 * event, a replay, deleting it. Every change is in the team's audit log. Replacing an
 * endpoint's secret is WebhookSecretRotationService's.
 */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly teams: TeamsService,
    private readonly repository: WebhooksRepository,
    private readonly policy: AddressPolicy,
    private readonly secrets: WebhookSecrets,
    private readonly outbox: WebhookOutbox,
    private readonly transactions: Transactions,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    private readonly events: Events,
    private readonly limiter: AccountLimiter,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  async list(actor: Actor, teamId: number | null): Promise<EndpointList> {
    const { team, role } = await manageableBy(this.teams, actor, teamId);
    const endpoints = await this.transactions.run((m) =>
      this.repository.findForTeam(m, team?.id ?? null),
    );
    return { team, role, endpoints, limit: team ? this.config.webhooks.endpointsPerTeam : null };
  }

  async get(actor: Actor, teamId: number | null, endpointId: number): Promise<EndpointDetails> {
    const { team, role } = await manageableBy(this.teams, actor, teamId);
    return this.transactions.run(async (m) => {
      const endpoint = await this.repository.findInTeam(m, team?.id ?? null, endpointId);
      if (!endpoint) throw new WebhookEndpointNotFoundError();
      const deliveries = await this.repository.deliveriesOf(m, endpoint.id, DELIVERY_LOG_LENGTH);
      return { team, role, endpoint, deliveries, previousSignsUntil: this.previousSigns(endpoint) };
    });
  }

  /**
   * Registers an endpoint for the chosen events: an HTTPS URL (plain HTTP only where the
   * deployment allows) whose host resolves to no loopback, private, link-local or reserved
   * address outside WEBHOOK_ALLOWED_RANGES. Its signing secret is returned this once.
   */
  async create(
    actor: Actor,
    teamId: number | null,
    input: NewEndpointInput,
  ): Promise<CreatedEndpoint> {
    const { team } = await manageableBy(this.teams, actor, teamId);
    const [events, url] = await checkedTogether(
      () => this.chosenEvents(input.events),
      () => this.acceptableUrl(input.url, 'endpoint'),
    );
    return this.register(actor, team, { kind: 'events', url, events: events.join(',') });
  }

  /**
   * Registers an audit stream: every entry of the team's audit log (with no team, of the
   * instance's) sent to the URL in order, in batches of JSON lines, signed as every delivery is,
   * with `authorization` as the Authorization header when given (kept encrypted, never shown).
   */
  async createAuditStream(
    actor: Actor,
    teamId: number | null,
    input: NewAuditStreamInput,
  ): Promise<CreatedEndpoint> {
    const { team } = await manageableBy(this.teams, actor, teamId);
    const [url, authorization] = await checkedTogether(
      () => this.acceptableUrl(input.url, 'collector'),
      () => acceptableAuthorization(input.authorization),
    );
    return this.register(actor, team, { kind: 'audit_stream', url, events: '', authorization });
  }

  private async register(
    actor: Actor,
    team: Team | null,
    what: { kind: EndpointKind; url: string; events: string; authorization?: string | null },
  ): Promise<CreatedEndpoint> {
    const secret = newSigningSecret();
    const uid = randomBytes(12).toString('hex');
    const { kind, url, events, authorization } = what;
    const endpoint = await this.transactions.run(async (m) => {
      if (team) await this.reserveEndpoint(m, actor, team);
      const inserted = await this.repository.insertEndpoint(m, {
        uid,
        teamId: team?.id ?? null,
        kind,
        url,
        events,
        secret: this.secrets.seal(uid, secret),
        authorizationHeader: authorization
          ? this.secrets.sealAuthorization(uid, authorization)
          : null,
        createdById: 'userId' in actor ? (actor.userId ?? null) : null,
        createdAt: this.clock.now(),
      });
      this.audit.recordIn(m, actor, {
        event: 'webhook.created',
        teamId: team?.id ?? null,
        target: { type: 'webhook', id: inserted.id },
        detail: {
          url,
          ...(kind === 'events'
            ? { events: events.split(',').join(' ') }
            : { kind, authorization: authorization ? 'set' : 'none' }),
          ...(team ? { team: team.name } : {}),
        },
      });
      return inserted;
    });
    return { endpoint, secret };
  }

  async delete(actor: Actor, teamId: number | null, endpointId: number): Promise<WebhookEndpoint> {
    const { team } = await manageableBy(this.teams, actor, teamId);
    return this.transactions.run(async (m) => {
      if (team) await this.teams.certifyManager(m, actor, team.id);
      const endpoint = await this.repository.findInTeam(m, team?.id ?? null, endpointId);
      if (endpoint?.configKey) throw new ConfiguredEndpointError('url');
      if (!endpoint || !(await this.repository.deleteInTeam(m, endpoint.teamId, endpoint.id))) {
        throw new WebhookEndpointNotFoundError();
      }
      if (endpoint.teamId !== null) await this.repository.releaseEndpoint(m, endpoint.teamId);
      this.audit.recordIn(m, actor, {
        event: 'webhook.deleted',
        teamId: endpoint.teamId,
        target: { type: 'webhook', id: endpoint.id },
        detail: { url: endpoint.url },
      });
      return endpoint;
    });
  }

  /**
   * Certifies the maker's role, then counts one endpoint more for the team within
   * WEBHOOK_ENDPOINTS_PER_TEAM, in the registering transaction: registrations sent at once never
   * pass the limit, on any instance or node.
   */
  private async reserveEndpoint(m: EntityManager, actor: Actor, team: Team): Promise<void> {
    await this.teams.certifyManager(m, actor, team.id);
    const limit = this.config.webhooks.endpointsPerTeam;
    if (!(await this.repository.reserveEndpoint(m, team.id, limit))) {
      throw new WebhookEndpointLimitError(limit);
    }
  }

  private previousSigns(endpoint: WebhookEndpoint): Date | null {
    const until = endpoint.previousSecretUntil;
    return endpoint.previousSecret && until && until > this.clock.now() ? until : null;
  }

  /**
   * Sends the endpoint a `webhook.test` event (whatever events it chose); returns its id. A
   * person sends at most RATE_LIMIT_WEBHOOK_TESTS_PER_HOUR an hour: each is a request to a URL
   * they chose, and Tessera is no one's relay.
   */
  async sendTest(actor: Actor, teamId: number | null, endpointId: number): Promise<string> {
    const { team } = await manageableBy(this.teams, actor, teamId);
    // Counted before the transaction, as every limit is (a refusal then costs no write); a test
    // event the endpoint cannot take counts too.
    if (actor.kind !== 'operator') {
      await this.limiter.consume('webhook-tests', accountOf(actor), 'sent test events');
    }
    return this.transactions.run(async (m) => {
      // Still an owner or admin as the event is queued, as for every other change of endpoints.
      if (team) await this.teams.certifyManager(m, actor, team.id);
      const endpoint = await this.repository.findInTeam(m, team?.id ?? null, endpointId);
      if (!endpoint) throw new WebhookEndpointNotFoundError();
      if (endpoint.kind === 'audit_stream') {
        throw new ValidationError({
          delivery: 'An audit stream gets the audit log alone: it is sent no test event.',
        });
      }
      if (endpoint.status !== 'active') {
        throw new ValidationError({
          delivery: 'The endpoint is disabled: register it again before sending it a test event.',
        });
      }
      // Sent now, though the endpoint backs off after a failure: it shows whether it works again.
      const messageId = (await this.outbox.enqueueFor(m, [{ id: endpoint.id }], {
        type: TEST_EVENT,
        at: this.clock.now(),
        data: { team_id: endpoint.teamId, endpoint_id: endpoint.id },
      }))!;
      this.audit.recordIn(m, actor, {
        event: 'webhook.test_sent',
        teamId: endpoint.teamId,
        target: { type: 'webhook', id: endpoint.id },
        detail: { url: endpoint.url, message_id: messageId },
      });
      return messageId;
    });
  }

  /**
   * Sends a dead-lettered delivery again, from the first attempt of the schedule, with the same
   * webhook-id (the receiver may have seen it). The endpoint must be active.
   */
  async replay(
    actor: Actor,
    teamId: number | null,
    endpointId: number,
    deliveryId: number,
  ): Promise<WebhookEndpoint> {
    const { team } = await manageableBy(this.teams, actor, teamId);
    return this.transactions.run(async (m) => {
      if (team) await this.teams.certifyManager(m, actor, team.id);
      const endpoint = await this.repository.findInTeam(m, team?.id ?? null, endpointId);
      if (!endpoint) throw new WebhookEndpointNotFoundError();
      if (endpoint.status !== 'active') {
        throw new ValidationError({
          delivery: 'The endpoint is disabled: register it again before replaying its deliveries.',
        });
      }
      if (!(await this.repository.replay(m, endpoint.id, deliveryId, this.clock.now()))) {
        throw new WebhookDeliveryNotFoundError();
      }
      await this.events.publish(m, 'webhooks.enqueued', {});
      this.audit.recordIn(m, actor, {
        event: 'webhook.replayed',
        teamId: endpoint.teamId,
        target: { type: 'webhook', id: endpoint.id },
        detail: { url: endpoint.url, delivery_id: deliveryId },
      });
      return endpoint;
    });
  }

  /** Any endpoint's deliveries by its id, for the operator (`webhook:deliveries`). */
  async deliveriesForOperator(endpointId: number): Promise<EndpointDetails> {
    return this.transactions.run(async (m) => {
      const endpoint = await this.repository.findById(m, endpointId);
      if (!endpoint) throw new WebhookEndpointNotFoundError();
      const deliveries = await this.repository.deliveriesOf(m, endpoint.id, DELIVERY_LOG_LENGTH);
      return {
        team: null,
        role: null,
        endpoint,
        deliveries,
        previousSignsUntil: this.previousSigns(endpoint),
      };
    });
  }

  /** Every endpoint, or one team's (null: the operator's), a page after `afterId`. */
  pageForOperator(
    afterId: number,
    limit: number,
    teamId?: number | null,
  ): Promise<WebhookEndpoint[]> {
    return this.transactions.run((m) => this.repository.pageForOperator(m, afterId, limit, teamId));
  }

  private chosenEvents(events: string[]): WebhookEventType[] {
    const unknown = events.filter((e) => !isWebhookEventType(e));
    if (unknown.length > 0) {
      throw new ValidationError({
        events: `Unknown event ${unknown.map((e) => `"${e.slice(0, 60)}"`).join(', ')}: choose from ${WEBHOOK_EVENT_TYPES.join(', ')}.`,
      });
    }
    if (events.length === 0) throw new ValidationError({ events: 'Choose at least one event.' });
    return WEBHOOK_EVENT_TYPES.filter((e) => events.includes(e));
  }

  private async acceptableUrl(raw: string, whose: 'endpoint' | 'collector'): Promise<string> {
    if (raw.trim() === '') throw new ValidationError({ url: `Give the ${whose} a URL.` });
    try {
      const url = this.policy.parse(raw.trim());
      // Kept as the URL parser writes it: letters outside ASCII grow to %XX each.
      if (url.toString().length > URL_MAX) {
        throw new RefusedAddressError(`is longer than ${URL_MAX} characters once encoded`);
      }
      await this.policy.addressFor(url);
      return url.toString();
    } catch (error) {
      if (!(error instanceof RefusedAddressError)) throw error;
      throw new ValidationError({ url: `The URL ${error.message}.` });
    }
  }
}
