import type { WebhookDelivery } from './webhook-delivery.entity.js';
import type { WebhookEndpoint } from './webhook-endpoint.entity.js';
import { WEBHOOK_EVENTS, WEBHOOK_EVENT_TYPES } from './webhook-events.js';
import { secretVersionOf } from './webhook-secrets.js';
import type { RotatedSecret } from './webhook-secret-rotation.service.js';
import type { CreatedEndpoint, EndpointDetails, EndpointList } from './webhooks.service.js';

/** What a page shows of an endpoint: never its secret. */
function endpointView(e: WebhookEndpoint) {
  return {
    id: e.id,
    url: e.url,
    events: e.kind === 'events' ? e.events.split(',') : [],
    stream: e.kind === 'audit_stream',
    withAuthorization: e.authorizationHeader !== null,
    active: e.status === 'active',
    disabledReason: e.disabledReason,
    failingSince: e.failingSince,
    createdAt: e.createdAt,
  };
}

function deliveryView(d: WebhookDelivery) {
  return {
    id: d.id,
    messageId: d.messageId,
    eventType: d.eventType,
    status: d.status,
    attempts: d.attempts,
    responseCode: d.responseCode,
    latencyMs: d.latencyMs,
    lastError: d.lastError,
    excerpt: d.responseExcerpt,
    createdAt: d.createdAt,
    deliveredAt: d.deliveredAt,
  };
}

/** The list page: the team's endpoints, the events to choose from, and a new secret once. */
export function webhookListView(list: EndpointList, created?: CreatedEndpoint): object {
  const teamName = list.team?.name ?? 'every team';
  return {
    title: `Webhooks of ${teamName}`,
    team: list.team,
    endpoints: list.endpoints.map(endpointView),
    limit: list.limit,
    streams: list.endpoints.some((e) => e.kind === 'audit_stream'),
    events: WEBHOOK_EVENT_TYPES.map((name) => ({ name, description: WEBHOOK_EVENTS[name] })),
    created: created && {
      url: created.endpoint.url,
      stream: created.endpoint.kind === 'audit_stream',
      secret: created.secret,
      page: `/teams/${list.team?.id}/webhooks/${created.endpoint.id}`,
    },
  };
}

/** An endpoint's page with its delivery log, newest first, and a rotated secret once. */
export function webhookPageView(details: EndpointDetails, rotated?: RotatedSecret): object {
  const stream = details.endpoint.kind === 'audit_stream';
  return {
    title: `${stream ? 'Audit stream' : 'Webhook endpoint'} ${details.endpoint.url}`,
    team: details.team,
    endpoint: endpointView(details.endpoint),
    // An active stream sends nothing more while a delivery of it is dead: it waits for the
    // replay. A disabled one keeps nothing and sends nothing: it is registered again.
    stalled:
      stream &&
      details.endpoint.status === 'active' &&
      details.deliveries.some((d) => d.status === 'dead'),
    secretVersion: secretVersionOf(details.endpoint),
    previousSignsUntil: details.previousSignsUntil,
    deliveries: details.deliveries.map(deliveryView),
    rotated: rotated && {
      secret: rotated.secret,
      page: `/teams/${details.team?.id}/webhooks/${details.endpoint.id}`,
    },
  };
}
