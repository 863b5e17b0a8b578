import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type { EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log.js';
import { Clock } from '../clock/clock.js';
import { Actors } from '../common/actor.js';
import { ConfigError, type Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import type { ConfiguredEndpoint } from '../config/webhooks.config.js';
import { SchemaState } from '../database/schema-state.js';
import { Transactions } from '../database/transactions.js';
import { UnreadableSecretError } from '../two-factor/secret-cipher.js';
import { AddressPolicy, RefusedAddressError } from './address-policy.js';
import type { WebhookEndpoint } from './webhook-endpoint.entity.js';
import { WEBHOOK_EVENT_TYPES, isWebhookEventType } from './webhook-events.js';
import { WebhookSecrets } from './webhook-secrets.js';
import { WebhooksRepository } from './webhooks.repository.js';
import { PREVIOUS_SECRET_SIGNS_MS } from './webhook-secret-rotation.service.js';

/** What a start changed of the endpoints WEBHOOK_ENDPOINTS lists. */
export interface Synchronised {
  added: number;
  changed: number;
  removed: number;
}

/** The endpoint's name in the list: its URL, as a fixed-length key a unique index can hold. */
export const configKeyOf = (url: string): string => createHash('sha256').update(url).digest('hex');

/**
 * Keeps the operator's endpoints as WEBHOOK_ENDPOINTS lists them, at every start of the
 * server: one listed and not registered is added, one whose events or secret differ is brought
 * in line (a new secret as a rotation: the previous one signs for a day more), one disabled is
 * enabled again, one no longer listed is deleted; with the variable unset, nothing is touched.
 * A stored secret this key cannot open (SESSION_SECRET changed) is sealed again from the list.
 * Instances starting at once agree: the unique config_key lets one insert
 * each, and every change is conditional. A name that is not an event stops the start.
 */
@Injectable()
export class ConfiguredEndpoints implements OnApplicationBootstrap {
  private readonly logger = new Logger('Webhooks');

  constructor(
    private readonly repository: WebhooksRepository,
    private readonly secrets: WebhookSecrets,
    private readonly transactions: Transactions,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    private readonly policy: AddressPolicy,
    private readonly schema: SchemaState,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.webhooks.endpoints === null) return;
    // DB_MIGRATE=false with migrations pending: the tables may not be there yet.
    if (this.schema.pendingMigrations.length > 0 && !(await this.schema.upToDate())) {
      this.logger.warn(
        'WEBHOOK_ENDPOINTS: not applied, the database lacks migrations (they are applied at the next start)',
      );
      return;
    }
    const { added, changed, removed } = await this.synchronise();
    if (added + changed + removed > 0) {
      this.logger.log(
        `WEBHOOK_ENDPOINTS: ${added} endpoints added, ${changed} changed, ${removed} removed`,
      );
    }
  }

  async synchronise(): Promise<Synchronised> {
    const done: Synchronised = { added: 0, changed: 0, removed: 0 };
    const listed = this.config.webhooks.endpoints;
    // Not set: not managed from here (a one-off run without it deletes nothing).
    if (listed === null) return done;
    listed.forEach((endpoint, i) => checkEvents(endpoint, i));
    for (const [i, endpoint] of listed.entries()) await this.checkAddress(endpoint, i);
    for (const endpoint of listed) {
      const outcome = await this.transactions.run((m) => this.keep(m, endpoint));
      if (outcome) done[outcome]++;
    }
    const keys = new Set(listed.map((e) => configKeyOf(e.url)));
    done.removed = await this.transactions.run(async (m) => {
      let removed = 0;
      for (const stale of await this.repository.findConfigured(m)) {
        if (keys.has(stale.configKey!)) continue;
        if (!(await this.repository.deleteInTeam(m, null, stale.id))) continue;
        this.record(m, 'webhook.deleted', stale, { url: stale.url });
        removed++;
      }
      return removed;
    });
    return done;
  }

  private async keep(
    m: EntityManager,
    listed: ConfiguredEndpoint,
  ): Promise<'added' | 'changed' | null> {
    const configKey = configKeyOf(listed.url);
    const events = WEBHOOK_EVENT_TYPES.filter((e) => listed.events.includes(e)).join(',');
    const existing = await this.repository.findByConfigKey(m, configKey);
    if (!existing) {
      const uid = randomBytes(12).toString('hex');
      const inserted = await this.repository.insertConfigured(m, {
        uid,
        url: listed.url,
        events,
        secret: this.secrets.seal(uid, listed.secret),
        configKey,
        createdAt: this.clock.now(),
      });
      // Null: another instance starting at the same moment registered it.
      if (!inserted) return null;
      this.record(m, 'webhook.created', inserted, {
        url: listed.url,
        events: events.replaceAll(',', ' '),
      });
      return 'added';
    }
    let changed = await this.repository.updateEvents(m, existing.id, events);
    // Listed, so wanted: one disabled (it failed for days, or answered 410) is tried again.
    if (await this.repository.enable(m, existing.id)) {
      this.logger.warn(
        `WEBHOOK_ENDPOINTS: enabled ${existing.url} again (it was disabled: ${existing.disabledReason})`,
      );
      changed = true;
    }
    const current = this.readableSecretOf(existing);
    if (current === null) {
      // Sealed under another SESSION_SECRET: the listed secret is sealed again, alone (the one
      // stored cannot sign any more).
      const secret = this.secrets.seal(existing.uid, listed.secret);
      if (await this.repository.resealSecret(m, existing.id, existing.secret, secret)) {
        this.logger.warn(
          `WEBHOOK_ENDPOINTS: the secret stored for ${existing.url} could not be read (SESSION_SECRET changed?): sealed again from the list`,
        );
        changed = true;
      }
    } else if (current !== listed.secret) {
      const previousSecretUntil = new Date(this.clock.nowMs() + PREVIOUS_SECRET_SIGNS_MS);
      const next = { secret: this.secrets.seal(existing.uid, listed.secret), previousSecretUntil };
      if (await this.repository.replaceSecret(m, existing.id, existing.secret, next)) {
        this.record(m, 'webhook.secret_rotated', existing, {
          url: existing.url,
          previous_signs_until: previousSecretUntil.toISOString(),
        });
        changed = true;
      }
    }
    return changed ? 'changed' : null;
  }

  /** The stored secret, or null when this key cannot open it. */
  private readableSecretOf(endpoint: WebhookEndpoint): string | null {
    try {
      return this.secrets.currentOf(endpoint);
    } catch (error) {
      if (error instanceof UnreadableSecretError) return null;
      throw error;
    }
  }

  /**
   * An endpoint named by an address (not a host name) is checked at start as it would be at
   * every send: one that no delivery could reach stops the start, saying why. A host name is
   * resolved, and checked, when a delivery is sent.
   */
  private async checkAddress(endpoint: ConfiguredEndpoint, i: number): Promise<void> {
    const url = new URL(endpoint.url);
    if (!isIP(url.hostname.replace(/^\[(.*)\]$/, '$1'))) return;
    try {
      await this.policy.addressFor(url);
    } catch (error) {
      if (!(error instanceof RefusedAddressError)) throw error;
      throw new ConfigError([
        `WEBHOOK_ENDPOINTS: endpoint ${i + 1} (${endpoint.url}) ${error.message}; allow its range with WEBHOOK_ALLOWED_RANGES`,
      ]);
    }
  }

  private record(
    m: EntityManager,
    event: 'webhook.created' | 'webhook.deleted' | 'webhook.secret_rotated',
    endpoint: WebhookEndpoint,
    detail: Record<string, string>,
  ): void {
    this.audit.recordIn(m, Actors.system, {
      event,
      userId: null,
      teamId: null,
      target: { type: 'webhook', id: endpoint.id },
      detail: { ...detail, source: 'WEBHOOK_ENDPOINTS' },
    });
  }
}

function checkEvents(endpoint: ConfiguredEndpoint, i: number): void {
  const unknown = endpoint.events.filter((e) => !isWebhookEventType(e));
  if (unknown.length === 0) return;
  // The settings' own error: the start says what to fix in one line, without a stack.
  throw new ConfigError([
    `WEBHOOK_ENDPOINTS: endpoint ${i + 1} (${endpoint.url}) names ${unknown.map((e) => `"${e}"`).join(', ')}, not an event: choose from ${WEBHOOK_EVENT_TYPES.join(', ')}`,
  ]);
}
