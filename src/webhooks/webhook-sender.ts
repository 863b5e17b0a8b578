import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Clock } from '../clock/clock.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { Transactions } from '../database/transactions.js';
import { OnEvent } from '../events/events.js';
import { Scheduler, untilAbandoned } from '../scheduler/scheduler.js';
import type { WebhookDelivery } from './webhook-delivery.entity.js';
import type { WebhookEndpoint } from './webhook-endpoint.entity.js';
import { WebhookHttp, type HttpOutcome } from './webhook-http.js';
import { WebhookSecrets } from './webhook-secrets.js';
import { UnreadableSecretError } from '../two-factor/secret-cipher.js';
import { signedHeaders } from './webhook-signature.js';
import { WebhooksRepository } from './webhooks.repository.js';
import { retryDelayMs } from './retry-schedule.js';
import { EndpointHealth } from './endpoint-health.js';
import { AuditStreamBatches } from './audit-stream-batches.js';
import { TEST_EVENT } from './webhook-events.js';

/** What an attempt came to, for the chain of the endpoint's deliveries it was one of. */
type Attempt = 'delivered' | 'failed' | 'backing off' | 'disabled';

/**
 * Whether a failure says the endpoint cannot take deliveries now (no answer, an address
 * refused, a 5xx, a 429) rather than that it refused this one delivery (another 4xx).
 */
/**
 * An attempt that could not be made: the endpoint's signing secret, or an audit stream's
 * Authorization value, was sealed under another SESSION_SECRET than this instance's.
 */
const unreadable = (error: string): HttpOutcome => ({
  status: null,
  latencyMs: 0,
  excerpt: null,
  error,
  refused: true,
});
const UNREADABLE = {
  secret: unreadable(
    'not sent: its signing secret cannot be read with this SESSION_SECRET; rotate the secret',
  ),
  authorization: unreadable(
    'not sent: its Authorization value cannot be read with this SESSION_SECRET; register the audit stream again',
  ),
};

/** What `read` gives, or null when a sealed value it opens cannot be read. */
function unlessUnreadable<T>(read: () => T): T | null {
  try {
    return read();
  } catch (error) {
    if (error instanceof UnreadableSecretError) return null;
    throw error;
  }
}

function endpointAtFault(outcome: HttpOutcome): boolean {
  return outcome.status === null || outcome.status >= 500 || outcome.status === 429;
}

/** How many endpoints an instance sends to at once. */
const SENDING_AT_ONCE = 10;
/** How many of one endpoint's deliveries are claimed together, at most (see `perEndpoint`). */
const PER_ENDPOINT_MAX = 5;
/**
 * Twice what the sends of one claim may take together at most (an endpoint's deliveries are
 * claimed only as many at once as fit in half of it), so that the lookups and writes around the
 * sends fit too; a send that would end past its lease is handed back instead.
 */
const LEASE_MS = 2 * 60_000;
/**
 * How long past a failing endpoint's retry, beyond WEBHOOK_TIMEOUT_MS, its other deliveries wait
 * when nobody records the retry's answer (its instance stopped): then they go anyway.
 */
export const BACKOFF_MARGIN_MS = 5_000;
const SEND_JOB = 'webhook sending';
/** For deliveries no commit of this process woke it for (written by another instance). */
const POLL_MS = 60_000;
const MIN_LOOK_MS = 1_000;
const PRUNE_EVERY_MS = 3_600_000;
/** How long the delivery log keeps what was delivered or dead-lettered. */
export const KEEP_DELIVERIES_MS = 30 * 86_400_000;

/**
 * Sends the webhook outbox, as the mail outbox is sent: woken after each commit that wrote
 * deliveries, after each send, and by the scheduler when one is next due, claiming each with a
 * lease so that any number of instances send it once; a failed attempt is retried on the
 * schedule of `retry-schedule.ts`, then dead-lettered. Up to SENDING_AT_ONCE endpoints are sent
 * to at once, each its oldest due deliveries one after the other, and a round only claims and
 * starts sends: an endpoint that is slow to answer holds back its own deliveries, never another's.
 */
@Injectable()
export class WebhookSender implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Webhooks');
  private readonly owner = randomUUID();
  private busy = false;
  private wokenWhileBusy = false;
  private stopped = false;
  private prunedAt = 0;
  private current: Promise<void> = Promise.resolve();
  /** The sends under way to each endpoint this instance is sending to, by the endpoint's id. */
  private readonly sending = new Map<number, Promise<void>>();
  /**
   * How many of an endpoint's deliveries one claim takes: as many as WEBHOOK_TIMEOUT_MS lets
   * it send, one after the other, within half their lease (one from a timeout of 31 s).
   */
  private readonly perEndpoint: number;
  private readonly timeoutMs: number;

  constructor(
    private readonly repository: WebhooksRepository,
    private readonly http: WebhookHttp,
    private readonly secrets: WebhookSecrets,
    private readonly health: EndpointHealth,
    private readonly streams: AuditStreamBatches,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly scheduler: Scheduler,
    @Inject(CONFIG) config: Config,
  ) {
    this.timeoutMs = config.webhooks.timeoutMs;
    const sends = Math.floor(LEASE_MS / 2 / this.timeoutMs);
    this.perEndpoint = Math.max(1, Math.min(PER_ENDPOINT_MAX, sends));
  }

  onApplicationBootstrap(): void {
    this.wake();
  }

  @OnEvent('webhooks.enqueued', { afterCommit: true })
  wake(): void {
    if (!this.stopped) this.scheduler.after(SEND_JOB, 0, (signal) => this.round(signal));
  }

  /**
   * Stops taking deliveries, and waits for the round and the sends under way (each ends within
   * WEBHOOK_TIMEOUT_MS). Only this sender's own work is waited for: the other workers stop on
   * their own.
   */
  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    await this.current;
    await Promise.all(this.sending.values());
  }

  private async round(signal: AbortSignal): Promise<void> {
    if (this.stopped) return;
    if (this.busy) {
      this.wokenWhileBusy = true;
      return;
    }
    this.busy = true;
    let nextLookMs = POLL_MS;
    try {
      const work = untilAbandoned(signal, this.sendDue(signal));
      this.current = work.then(
        () => undefined,
        () => undefined,
      );
      nextLookMs = await work;
    } catch (error) {
      this.logger.warn(`Could not read the webhook outbox: ${String(error)}`);
    } finally {
      this.busy = false;
    }
    if (this.wokenWhileBusy) {
      this.wokenWhileBusy = false;
      this.wake();
    } else if (!this.stopped) {
      this.scheduler.after(SEND_JOB, nextLookMs, (next) => this.round(next));
    }
  }

  private async sendDue(signal: AbortSignal): Promise<number> {
    await this.pruneNowAndThen();
    while (!this.stopped && !signal.aborted && this.sending.size < SENDING_AT_ONCE) {
      await this.streams.form();
      const now = this.clock.now();
      const leaseUntil = new Date(now.getTime() + LEASE_MS);
      const batch = await this.transactions.run(
        (m) =>
          this.repository.claimDue(
            m,
            { now, owner: this.owner, leaseUntil },
            {
              endpoints: SENDING_AT_ONCE - this.sending.size,
              each: this.perEndpoint,
              sendingTo: [...this.sending.keys()],
            },
          ),
        { isolation: 'READ COMMITTED' },
      );
      if (batch.length === 0) break;
      const endpoints = await this.endpointsOf(batch);
      const byEndpoint = new Map<number, WebhookDelivery[]>();
      for (const d of batch)
        byEndpoint.set(d.endpointId, [...(byEndpoint.get(d.endpointId) ?? []), d]);
      for (const [id, deliveries] of byEndpoint) {
        this.startSending(id, deliveries, endpoints.get(id), leaseUntil);
      }
    }
    const next = await this.transactions.run((m) => this.repository.nextChance(m));
    if (!next) return POLL_MS;
    const inMs = next.getTime() - this.clock.nowMs();
    // Due already, yet not claimed here: an endpoint this instance sends to (its end wakes the
    // sender), or all places taken. Looking again every second would only find the same.
    if (inMs <= 0 && this.sending.size > 0) return POLL_MS;
    return Math.min(POLL_MS, Math.max(MIN_LOOK_MS, inMs));
  }

  /**
   * Sends one endpoint's claimed deliveries in the background, one after the other, oldest
   * first; once they are recorded, the next round claims its next due ones (or another
   * endpoint's, when this instance sends to as many as it may). Stopping hands back those not
   * sent yet.
   */
  private startSending(
    endpointId: number,
    deliveries: WebhookDelivery[],
    endpoint: WebhookEndpoint | undefined,
    leaseUntil: Date,
  ): void {
    // Another round claimed for this endpoint too (one abandoned as too long, still running):
    // this one's claim goes back, so that the endpoint is still sent to one at a time.
    const taken = this.sending.has(endpointId);
    const send = (async () => {
      const left = taken ? deliveries : await this.inTurn(deliveries, endpoint, leaseUntil);
      if (left.length === 0) return;
      const ids = left.map((d) => d.id);
      await this.transactions.run((m) => this.repository.release(m, ids, this.owner));
    })()
      .catch((error: unknown) => {
        // Not recorded (the database failed): the leases lapse, and they are tried again then.
        this.logger.warn(`Could not send to endpoint ${endpointId}: ${String(error)}`);
      })
      .finally(() => {
        if (this.sending.get(endpointId) === send) this.sending.delete(endpointId);
        this.wake();
      });
    if (!taken) this.sending.set(endpointId, send);
  }

  /**
   * Sends the deliveries one after the other; returns those not sent: all that follow once the
   * sender stops, once a send could end past their lease (another instance may claim them then),
   * or, but for test events, once one failed and the endpoint backs off (they wait for its retry).
   * A test event that gets through meanwhile ends the back-off: those held are handed back due
   * at once, to go in order in the next round.
   */
  private async inTurn(
    deliveries: WebhookDelivery[],
    endpoint: WebhookEndpoint | undefined,
    leaseUntil: Date,
  ): Promise<WebhookDelivery[]> {
    const held: WebhookDelivery[] = [];
    let backingOff = false;
    for (const [i, delivery] of deliveries.entries()) {
      if (this.stopped || this.clock.nowMs() + this.timeoutMs > leaseUntil.getTime()) {
        return [...held, ...deliveries.slice(i)];
      }
      if (backingOff && delivery.eventType !== TEST_EVENT) {
        held.push(delivery);
        continue;
      }
      const result = await this.deliver(delivery, endpoint);
      if (result === 'backing off') backingOff = true;
      else if (backingOff && result === 'delivered') return [...held, ...deliveries.slice(i + 1)];
    }
    return held;
  }

  private async endpointsOf(batch: WebhookDelivery[]): Promise<Map<number, WebhookEndpoint>> {
    const ids = [...new Set(batch.map((d) => d.endpointId))];
    const found = await this.transactions.run((m) =>
      Promise.all(ids.map((id) => this.repository.findById(m, id))),
    );
    return new Map(found.filter((e) => e !== null).map((e) => [e.id, e]));
  }

  private async deliver(
    delivery: WebhookDelivery,
    endpoint: WebhookEndpoint | undefined,
  ): Promise<Attempt> {
    if (!endpoint || endpoint.status !== 'active') {
      await this.transactions.run((m) =>
        this.repository.settle(m, delivery, this.owner, {
          status: 'dead',
          lastError: 'the endpoint is disabled',
        }),
      );
      return 'failed';
    }
    const now = this.clock.now();
    const timestamp = Math.floor(now.getTime() / 1000);
    // Sealed under another SESSION_SECRET, a secret cannot be read: nothing is sent, and the
    // attempt is recorded as failed, saying which, so it follows the retry schedule and the
    // page says what to do.
    const secrets = unlessUnreadable(() => this.secrets.signingSecrets(endpoint, now));
    if (secrets === null) return this.record(delivery, endpoint, UNREADABLE.secret);
    const stream = endpoint.kind === 'audit_stream';
    const streamHeaders = stream ? unlessUnreadable(() => this.streamHeaders(endpoint)) : {};
    if (streamHeaders === null) return this.record(delivery, endpoint, UNREADABLE.authorization);
    const headers = {
      ...signedHeaders(secrets, delivery.messageId, timestamp, delivery.payload),
      ...streamHeaders,
    };
    const outcome = await this.http.post(endpoint.url, headers, delivery.payload);
    return this.record(delivery, endpoint, outcome);
  }

  /** An audit stream's body is JSON lines; its collector may want an Authorization header. */
  private streamHeaders(endpoint: WebhookEndpoint): Record<string, string> {
    const authorization = this.secrets.authorizationOf(endpoint);
    return {
      'content-type': 'application/x-ndjson',
      ...(authorization === null ? {} : { authorization }),
    };
  }

  /**
   * Records the attempt. A failure of the endpoint's own (no answer, a 5xx, a 429, an address
   * refused) that is to be retried backs the endpoint off: its other deliveries wait for that
   * retry rather than each costing the sender an attempt (a timeout, for an endpoint that does
   * not answer) the endpoint would most likely fail too. A delivery refused for itself (any other
   * 4xx) is retried on its own, and a test event backs nothing off.
   */
  private async record(
    delivery: WebhookDelivery,
    endpoint: WebhookEndpoint,
    outcome: HttpOutcome,
  ): Promise<Attempt> {
    const now = this.clock.now();
    const facts = {
      responseCode: outcome.status,
      latencyMs: outcome.latencyMs,
      lastError: outcome.error,
      responseExcerpt: outcome.excerpt,
    };
    const what = `${delivery.eventType} ${delivery.messageId} to endpoint ${endpoint.id}`;
    if (outcome.error === null) {
      // Two conditional updates, side by side in autocommit (each a no-op when run again): the
      // delivery's outcome, and the endpoint's failing mark cleared, which writes only when it
      // was set, here or by another instance.
      await this.transactions.runStatement((m) =>
        Promise.all([
          this.repository.settle(m, delivery, this.owner, {
            ...facts,
            status: 'delivered',
            deliveredAt: now,
          }),
          this.repository.markRecovered(m, endpoint.id, { now, owner: this.owner }),
        ]),
      );
      endpoint.failingSince = null;
      return 'delivered';
    }
    if (outcome.refused) this.logger.warn(`Refused to send ${what}: ${outcome.error}`);
    const gone = outcome.status === 410;
    const retryIn = gone ? null : retryDelayMs(delivery.attempts);
    const result = await this.transactions.run(async (m): Promise<Attempt> => {
      // Failing since this failure, or since when the row says (a success of another instance
      // may have cleared it since this batch read the endpoint): the days are counted from there.
      endpoint.failingSince = await this.repository.markFailing(m, endpoint.id, now);
      // Disabled now (or by another instance): this delivery is dead-lettered with the rest.
      const off = await this.health.afterFailure(m, endpoint, gone, now);
      const retryAt = off || retryIn === null ? null : new Date(now.getTime() + retryIn);
      await this.repository.settle(m, delivery, this.owner, {
        ...facts,
        ...(retryAt === null ? { status: 'dead' as const } : { nextAttemptAt: retryAt }),
      });
      if (retryAt !== null && delivery.eventType !== TEST_EVENT && endpointAtFault(outcome)) {
        // The others wait past the retry's answer (at most WEBHOOK_TIMEOUT_MS): on any instance
        // only the retry is due then, and its success sends them at once, in order.
        const heldUntil = new Date(retryAt.getTime() + this.timeoutMs + BACKOFF_MARGIN_MS);
        await this.repository.backOff(m, endpoint.id, {
          retried: delivery.id,
          heldUntil,
          now,
          owner: this.owner,
        });
        return 'backing off';
      }
      return off ? 'disabled' : 'failed';
    });
    // The rest of this claim's deliveries to a disabled endpoint are dead-lettered, not sent.
    if (result === 'disabled') endpoint.status = 'disabled';
    const delay = result === 'disabled' ? null : retryIn;
    if (delay === null) {
      this.logger.warn(`Gave up on ${what} after ${delivery.attempts} attempts: ${outcome.error}`);
    } else if (!outcome.refused) {
      this.logger.log(
        `Could not deliver ${what} (attempt ${delivery.attempts}); next in ${Math.round(delay / 1000)} s: ${outcome.error}`,
      );
    }
    return result;
  }

  private async pruneNowAndThen(): Promise<void> {
    if (this.clock.nowMs() - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = this.clock.nowMs();
    const before = new Date(this.clock.nowMs() - KEEP_DELIVERIES_MS);
    await this.transactions.run((m) => this.repository.pruneFinished(m, before));
  }
}
