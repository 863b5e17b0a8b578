import { WEBHOOK_EVENTS, type WebhookEventType } from './webhook-events.js';

type Schema = Record<string, unknown>;

const int = { type: 'integer' };
const text = { type: 'string' };
const nullableText = { type: ['string', 'null'] };
const bool = { type: 'boolean' };

/** What every event's data holds: the team, who acted, and the id of what it is about. */
const COMMON: Record<string, Schema> = {
  team_id: { type: ['integer', 'null'], description: 'The team; null for none.' },
  actor: {
    type: 'object',
    description: 'Who acted.',
    required: ['kind'],
    properties: {
      kind: { type: 'string', enum: ['user', 'token', 'operator', 'system', 'anonymous'] },
      user_id: int,
      token_id: int,
    },
  },
  user_id: { ...int, description: 'The account the event concerns.' },
};

const TOKEN = { token_id: int, name: text };

/** Each event's own fields (besides COMMON), as the team's audit log records them. */
const FIELDS: Record<WebhookEventType, Record<string, Schema>> = {
  'token.created': { ...TOKEN, abilities: text, service_account: text },
  'token.updated': { ...TOKEN, abilities: text, previous_name: text },
  'token.regenerated': { ...TOKEN, grace_minutes: int },
  'token.revoked': {
    ...TOKEN,
    reason: { type: 'string', enum: ['person', 'team_admin', 'leak_report', 'expiry'] },
    by_team: text,
  },
  'token.expiring': { ...TOKEN, expires_at: { type: 'string', format: 'date-time' } },
  'token.used_from_new_address': { ...TOKEN, ip: text },
  'token.leak_reported': { ...TOKEN, found_at: nullableText },
  'member.invited': { invitation_id: int, team: text, email: text, role: text },
  'member.joined': { team: text, member: nullableText, role: text },
  'member.role_changed': { team: text, member: nullableText, role: text, previous_role: text },
  'member.removed': { team: text, member: nullableText },
  'team.policy_changed': {
    team: text,
    require_two_factor: bool,
    token_max_lifetime_days: { type: ['integer', 'null'] },
    allowed_abilities: nullableText,
    previous_require_two_factor: bool,
    previous_token_max_lifetime_days: { type: ['integer', 'null'] },
    previous_allowed_abilities: nullableText,
  },
  'service_account.created': {
    service_account_id: int,
    service_account: text,
    description: nullableText,
    team: text,
  },
  'service_account.deleted': { service_account_id: int, service_account: text, team: text },
};

const HEADERS = [
  ['webhook-id', "The event's id (`msg_…`): the same on every attempt."],
  ['webhook-timestamp', 'When the attempt was signed, in seconds since the epoch.'],
  [
    'webhook-signature',
    "`v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` with the endpoint's secret; two, space-separated, while a rotated secret still signs.",
  ],
].map(([name, description]) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema: { type: 'string' },
}));

/**
 * The OpenAPI 3.1 `webhooks` section: for each event of version 1, the request Tessera sends
 * (Standard Webhooks' headers and the body's JSON schema) and what it expects back.
 */
export function webhookDocument(): Record<string, Schema> {
  return Object.fromEntries(
    (Object.keys(WEBHOOK_EVENTS) as WebhookEventType[]).map((type) => [
      type,
      {
        post: {
          operationId: `webhook_${type.replace('.', '_')}`,
          summary: WEBHOOK_EVENTS[type],
          description: `Sent to the endpoints that chose \`${type}\`. See docs/webhooks.md for retries and verification.`,
          tags: ['Webhooks'],
          // No credential: the receiver checks the signature instead.
          security: [],
          parameters: HEADERS,
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['type', 'timestamp', 'data'],
                  properties: {
                    type: { type: 'string', const: type },
                    timestamp: { type: 'string', format: 'date-time' },
                    data: {
                      type: 'object',
                      required: ['team_id', 'actor'],
                      properties: { ...COMMON, ...FIELDS[type] },
                    },
                  },
                },
              },
            },
          },
          responses: {
            '200': { description: 'Any 2xx answer: delivered.' },
            '410': { description: 'Gone: the endpoint is disabled, nothing more is sent.' },
          },
        },
      },
    ]),
  );
}
