import { Injectable } from '@nestjs/common';
import { In, IsNull, MoreThan, Not, type EntityManager } from 'typeorm';
import { AuditEvent } from '../audit/audit-event.entity.js';
import { foreignKeyViolation, isUniqueViolation } from '../common/errors/database-errors.js';
import { releaseTeamCount, reserveTeamCount } from '../teams/team-counts.js';
import { claimDueRows, nextChanceOf, releaseRows, type Claim } from '../database/leased-rows.js';
import { AuditStreamEntry } from './audit-stream-entry.entity.js';
import { WebhookDelivery } from './webhook-delivery.entity.js';
import { WebhookEndpoint } from './webhook-endpoint.entity.js';
import { TEST_EVENT } from './webhook-events.js';

export type NewDelivery = Pick<
  WebhookDelivery,
  'endpointId' | 'messageId' | 'eventType' | 'payload' | 'nextAttemptAt' | 'createdAt'
>;

/** Log entries queued for audit streams per INSERT, within the databases' parameter limits. */
const STREAM_QUEUE_CHUNK = 500;

/** Endpoints, scoped by their team (null: the operator's), and their deliveries. */
@Injectable()
export class WebhooksRepository {
  async insertEndpoint(
    manager: EntityManager,
    row: Pick<
      WebhookEndpoint,
      'uid' | 'teamId' | 'url' | 'events' | 'secret' | 'createdById' | 'createdAt'
    > &
      Partial<Pick<WebhookEndpoint, 'kind' | 'authorizationHeader' | 'configKey'>>,
  ): Promise<WebhookEndpoint> {
    return manager.getRepository(WebhookEndpoint).save({
      kind: 'events' as const,
      authorizationHeader: null,
      configKey: null,
      ...row,
      status: 'active' as const,
      previousSecret: null,
      previousSecretUntil: null,
      disabledReason: null,
      failingSince: null,
    });
  }

  /**
   * Registers an endpoint of WEBHOOK_ENDPOINTS unless another instance just did (its
   * config_key is taken): then null, and nothing of this transaction is undone.
   */
  async insertConfigured(
    manager: EntityManager,
    row: Pick<WebhookEndpoint, 'uid' | 'url' | 'events' | 'secret' | 'configKey' | 'createdAt'>,
  ): Promise<WebhookEndpoint | null> {
    try {
      // A savepoint: a collision undoes this insert only.
      return await manager.transaction((m) =>
        this.insertEndpoint(m, { ...row, teamId: null, createdById: null }),
      );
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      return null;
    }
  }

  findByConfigKey(manager: EntityManager, configKey: string): Promise<WebhookEndpoint | null> {
    return manager.getRepository(WebhookEndpoint).findOneBy({ configKey });
  }

  /** The endpoints WEBHOOK_ENDPOINTS registered, whatever it lists now. */
  findConfigured(manager: EntityManager): Promise<WebhookEndpoint[]> {
    return manager
      .getRepository(WebhookEndpoint)
      .find({ where: { configKey: Not(IsNull()) }, order: { id: 'ASC' } });
  }

  async updateEvents(manager: EntityManager, id: number, events: string): Promise<boolean> {
    const result = await manager
      .getRepository(WebhookEndpoint)
      .update({ id, events: Not(events) }, { events });
    return (result.affected ?? 0) > 0;
  }

  /** Every endpoint (of one team, or of none: the operator's), by id, a page after `afterId`. */
  pageForOperator(
    manager: EntityManager,
    afterId: number,
    limit: number,
    teamId?: number | null,
  ): Promise<WebhookEndpoint[]> {
    const team = teamId === undefined ? {} : { teamId: teamId === null ? IsNull() : teamId };
    return manager.getRepository(WebhookEndpoint).find({
      where: { id: MoreThan(afterId), ...team },
      relations: { team: true },
      order: { id: 'ASC' },
      take: limit,
    });
  }

  findForTeam(manager: EntityManager, teamId: number | null): Promise<WebhookEndpoint[]> {
    return manager.getRepository(WebhookEndpoint).find({
      where: { teamId: teamId === null ? IsNull() : teamId },
      order: { id: 'ASC' },
    });
  }

  findInTeam(
    manager: EntityManager,
    teamId: number | null,
    id: number,
  ): Promise<WebhookEndpoint | null> {
    return manager
      .getRepository(WebhookEndpoint)
      .findOneBy({ id, teamId: teamId === null ? IsNull() : teamId });
  }

  /** Any endpoint by id: for the operator, who manages every team's. */
  findById(manager: EntityManager, id: number): Promise<WebhookEndpoint | null> {
    return manager.getRepository(WebhookEndpoint).findOneBy({ id });
  }

  /** The active endpoints that get the events of `teamId`: the team's and the operator's. */
  findActiveFor(manager: EntityManager, teamId: number | null): Promise<WebhookEndpoint[]> {
    const where =
      teamId === null
        ? [{ status: 'active' as const, teamId: IsNull() }]
        : [
            { status: 'active' as const, teamId: IsNull() },
            { status: 'active' as const, teamId },
          ];
    return manager.getRepository(WebhookEndpoint).find({ where, order: { id: 'ASC' } });
  }

  /**
   * Gives the endpoint a new secret, keeping the one it replaces as the previous one, when its
   * secret is still `current` (the sealed value read); false when another rotation came first.
   */
  async replaceSecret(
    manager: EntityManager,
    id: number,
    current: string,
    next: Pick<WebhookEndpoint, 'secret' | 'previousSecretUntil'>,
  ): Promise<boolean> {
    const result = await manager
      .getRepository(WebhookEndpoint)
      .update({ id, secret: current }, { ...next, previousSecret: current });
    return (result.affected ?? 0) > 0;
  }

  /** A new sealed secret in place of `current`, with no previous one signing beside it. */
  async resealSecret(
    manager: EntityManager,
    id: number,
    current: string,
    secret: string,
  ): Promise<boolean> {
    const result = await manager
      .getRepository(WebhookEndpoint)
      .update({ id, secret: current }, { secret, previousSecret: null, previousSecretUntil: null });
    return (result.affected ?? 0) > 0;
  }

  /**
   * Counts one endpoint more for the team while it has fewer than `limit` (one conditional
   * write: registrations sent at once never pass it). Run it in the registering transaction.
   */
  reserveEndpoint(manager: EntityManager, teamId: number, limit: number): Promise<boolean> {
    return reserveTeamCount(manager, teamId, 'webhookEndpoints', limit);
  }

  /** Counts one endpoint of the team less (it was deleted). */
  releaseEndpoint(manager: EntityManager, teamId: number): Promise<void> {
    return releaseTeamCount(manager, teamId, 'webhookEndpoints');
  }

  async deleteInTeam(manager: EntityManager, teamId: number | null, id: number): Promise<boolean> {
    const result = await manager
      .getRepository(WebhookEndpoint)
      .delete({ id, teamId: teamId === null ? IsNull() : teamId });
    return (result.affected ?? 0) > 0;
  }

  async insertDeliveries(manager: EntityManager, rows: NewDelivery[]): Promise<void> {
    if (rows.length === 0) return;
    await manager
      .getRepository(WebhookDelivery)
      .createQueryBuilder()
      .insert()
      .values(rows.map((r) => ({ ...r, status: 'pending' as const, attempts: 0 })))
      .updateEntity(false)
      .execute();
  }

  /**
   * Takes due deliveries of up to `endpoints` endpoints, at most `each` of one endpoint (its
   * oldest due), and none of the endpoints `sendingTo`, which this instance is sending to.
   */
  claimDue(
    manager: EntityManager,
    claim: Omit<Claim, 'limit'>,
    { endpoints, each, sendingTo }: { endpoints: number; each: number; sendingTo: number[] },
  ): Promise<WebhookDelivery[]> {
    return claimDueRows(
      manager,
      WebhookDelivery,
      { ...claim, limit: endpoints * each },
      { column: 'endpoint_id', key: (d) => d.endpointId, groups: endpoints, each, busy: sendingTo },
    );
  }

  /** Hands back, untried, deliveries claimed but not yet sent (at shutdown). */
  release(manager: EntityManager, ids: number[], owner: string): Promise<void> {
    return releaseRows(manager, WebhookDelivery, ids, owner);
  }

  /** When a pending delivery may next be claimed (a retry, or a lease that lapses); null: none. */
  nextChance(manager: EntityManager): Promise<Date | null> {
    return nextChanceOf(manager, WebhookDelivery);
  }

  /** Records an attempt's outcome while the lease is held; false when it was lost. */
  async settle(
    manager: EntityManager,
    delivery: Pick<WebhookDelivery, 'id'>,
    owner: string,
    change: Partial<
      Pick<
        WebhookDelivery,
        | 'status'
        | 'nextAttemptAt'
        | 'responseCode'
        | 'latencyMs'
        | 'lastError'
        | 'responseExcerpt'
        | 'deliveredAt'
      >
    >,
  ): Promise<boolean> {
    const result = await manager
      .getRepository(WebhookDelivery)
      .update(
        { id: delivery.id, claimedBy: owner },
        { ...change, claimedUntil: null, claimedBy: null },
      );
    return (result.affected ?? 0) > 0;
  }

  /** The endpoint's deliveries, newest first. */
  deliveriesOf(
    manager: EntityManager,
    endpointId: number,
    limit: number,
  ): Promise<WebhookDelivery[]> {
    return manager.getRepository(WebhookDelivery).find({
      where: { endpointId },
      order: { id: 'DESC' },
      take: limit,
    });
  }

  /**
   * Deletes deliveries made before `before` that are no longer pending (the 30-day log); an
   * audit stream's dead delivery stays, since the stream waits for it to be replayed.
   */
  async pruneFinished(manager: EntityManager, before: Date): Promise<number> {
    const result = await manager
      .getRepository(WebhookDelivery)
      .createQueryBuilder()
      .delete()
      .where('created_at < :before', { before })
      .andWhere(
        "(status = 'delivered' OR (status = 'dead' AND endpoint_id NOT IN (SELECT id FROM webhook_endpoints WHERE kind = 'audit_stream')))",
      )
      .execute();
    return result.affected ?? 0;
  }

  /**
   * Queues the log's entries `auditEventIds` for every active audit stream that gets them (the
   * team's and the operator's), in the transaction that writes them to the log; returns how many
   * rows it queued. Which streams is a plain read, which locks nothing; the rows then go in with
   * their values, a simple insert, which on MySQL/MariaDB holds no table-wide AUTO-INC lock while
   * it waits (an `INSERT … SELECT` held it, so one change waiting on a stream held up every
   * other's). Their foreign key share-locks each stream's row until the change commits, so a
   * stream is not deleted under them, and a change waits at most for a batch being taken from
   * one of its streams. A stream deleted since the read refuses its rows and gets none.
   */
  async queueStreamEntries(manager: EntityManager, auditEventIds: number[]): Promise<number> {
    let queued = 0;
    for (let i = 0; i < auditEventIds.length; i += STREAM_QUEUE_CHUNK) {
      const ids = auditEventIds.slice(i, i + STREAM_QUEUE_CHUNK);
      const pairs: { endpoint_id: number | string; audit_event_id: number | string }[] =
        await manager.query(
          `SELECT e.id AS endpoint_id, a.id AS audit_event_id FROM audit_events a
           INNER JOIN webhook_endpoints e ON e.kind = 'audit_stream' AND e.status = 'active'
             AND (e.team_id IS NULL OR e.team_id = a.team_id)
           WHERE a.id IN (${ids.map(() => '?').join(', ')})
           ORDER BY a.id, e.id`,
          ids,
        );
      queued += await this.insertStreamEntries(
        manager,
        pairs.map((p) => ({
          endpointId: Number(p.endpoint_id),
          auditEventId: Number(p.audit_event_id),
        })),
      );
    }
    return queued;
  }

  /** The rows, in one INSERT; when a stream was deleted meanwhile, each stream's alone. */
  private async insertStreamEntries(
    manager: EntityManager,
    rows: Pick<AuditStreamEntry, 'endpointId' | 'auditEventId'>[],
  ): Promise<number> {
    if (rows.length === 0) return 0;
    // A refused statement is undone alone: the transaction goes on.
    const insert = async (some: typeof rows) => {
      try {
        await manager
          .createQueryBuilder()
          .insert()
          .into(AuditStreamEntry)
          .values(some)
          .updateEntity(false)
          .execute();
        return some.length;
      } catch (error) {
        if (foreignKeyViolation(error) !== 'missing') throw error;
        return 0;
      }
    };
    const all = await insert(rows);
    if (all > 0) return all;
    let queued = 0;
    for (const endpointId of new Set(rows.map((r) => r.endpointId))) {
      queued += await insert(rows.filter((r) => r.endpointId === endpointId));
    }
    return queued;
  }

  /** The active audit streams with entries waiting and no delivery pending or dead (stalled). */
  async streamsReadyForBatch(manager: EntityManager): Promise<number[]> {
    // From the streams' side, each looked up by index: a long queue behind a stalled stream is
    // never scanned.
    const rows: { id: number | string }[] = await manager
      .getRepository(WebhookEndpoint)
      .createQueryBuilder('e')
      .select('e.id', 'id')
      .where("e.kind = 'audit_stream' AND e.status = 'active'")
      .andWhere('EXISTS (SELECT 1 FROM audit_stream_entries s WHERE s.endpoint_id = e.id)')
      .andWhere(
        "NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.status IN ('pending', 'dead'))",
      )
      .getRawMany();
    return rows.map((r) => Number(r.id));
  }

  /**
   * The stream's oldest waiting entries (at most `limit`), with the log's rows (undefined for an
   * entry pruned from the log since), oldest first, while holding the endpoint: nothing when the
   * stream is not active, or has a delivery pending or dead, so that each batch is made only
   * after the one before it was delivered, and two instances do not make batches of the same
   * entries. Run it in a transaction, with `dropStreamEntries` for those taken.
   */
  async waitingStreamEntries(
    manager: EntityManager,
    endpointId: number,
    limit: number,
  ): Promise<{ entryId: number; event: AuditEvent | undefined }[] | null> {
    const query = manager
      .getRepository(WebhookEndpoint)
      .createQueryBuilder('e')
      .where('e.id = :endpointId', { endpointId });
    if (manager.connection.options.type !== 'better-sqlite3') query.setLock('pessimistic_write');
    const endpoint = await query.getOne();
    if (!endpoint || endpoint.kind !== 'audit_stream' || endpoint.status !== 'active') return null;
    const open = await manager
      .getRepository(WebhookDelivery)
      .exists({ where: { endpointId, status: In(['pending', 'dead']) } });
    if (open) return null;
    const entries = await manager.getRepository(AuditStreamEntry).find({
      where: { endpointId },
      order: { id: 'ASC' },
      take: limit,
    });
    if (entries.length === 0) return null;
    const rows = await manager
      .getRepository(AuditEvent)
      .findBy({ id: In(entries.map((e) => e.auditEventId)) });
    const byId = new Map(rows.map((r) => [Number(r.id), r]));
    return entries.map((e) => ({ entryId: e.id, event: byId.get(Number(e.auditEventId)) }));
  }

  /** Takes entries out of their stream's queue (they are in a delivery now). */
  async dropStreamEntries(manager: EntityManager, entryIds: number[]): Promise<void> {
    if (entryIds.length > 0)
      await manager.getRepository(AuditStreamEntry).delete({ id: In(entryIds) });
  }

  /**
   * Notes that the endpoint's deliveries fail, since `since` unless they already did; since when
   * they fail, as the row says once noted.
   */
  async markFailing(manager: EntityManager, endpointId: number, since: Date): Promise<Date> {
    const repo = manager.getRepository(WebhookEndpoint);
    await repo.update({ id: endpointId, failingSince: IsNull() }, { failingSince: since });
    const row = await repo.findOne({
      where: { id: endpointId },
      select: { id: true, failingSince: true },
    });
    return row?.failingSince ?? since;
  }

  /**
   * Holds the endpoint's pending deliveries but `retried` (which just failed, and is tried again
   * before `until`) back until `until`, with new ones (`backoffUntil`): those nobody holds and
   * those `owner` claimed with it, which it hands back; another instance's claim is left alone,
   * and so are test events, sent at once to show whether the endpoint works again. The retry's
   * success makes them due at once (`markRecovered`), in order.
   */
  async backOff(
    manager: EntityManager,
    endpointId: number,
    {
      retried,
      heldUntil: until,
      now,
      owner,
    }: { retried: number; heldUntil: Date; now: Date; owner: string },
  ): Promise<void> {
    // Only ever later: a shorter retry (a first attempt's) holds nothing back less long.
    await manager
      .getRepository(WebhookEndpoint)
      .createQueryBuilder()
      .update()
      .set({ backoffUntil: until })
      .where('id = :endpointId AND (backoff_until IS NULL OR backoff_until < :until)', {
        endpointId,
        until,
      })
      .execute();
    await manager
      .getRepository(WebhookDelivery)
      .createQueryBuilder()
      .update()
      .set({ nextAttemptAt: until })
      .where("endpoint_id = :endpointId AND status = 'pending' AND next_attempt_at < :until", {
        endpointId,
        until,
      })
      .andWhere('id <> :retried', { retried })
      .andWhere('event_type <> :test', { test: TEST_EVENT })
      .andWhere('(claimed_until IS NULL OR claimed_until <= :now OR claimed_by = :owner)', {
        now,
        owner,
      })
      .execute();
  }

  /**
   * Notes that the endpoint's deliveries succeed again: those held back for it (nobody's, or
   * `owner`'s, which it will hand back) are due now, and new ones are not held back. Writes
   * nothing when it was not failing (the usual case).
   */
  async markRecovered(
    manager: EntityManager,
    endpointId: number,
    { now, owner }: { now: Date; owner: string },
  ): Promise<void> {
    const endpoints = manager.getRepository(WebhookEndpoint);
    const row = await endpoints.findOne({
      where: { id: endpointId },
      select: { id: true, failingSince: true, backoffUntil: true },
    });
    if (!row || (row.failingSince === null && row.backoffUntil === null)) return;
    if (row.backoffUntil && row.backoffUntil > now) {
      await manager
        .getRepository(WebhookDelivery)
        .createQueryBuilder()
        .update()
        .set({ nextAttemptAt: now })
        .where("endpoint_id = :endpointId AND status = 'pending'", { endpointId })
        .andWhere('next_attempt_at > :now AND next_attempt_at <= :until', {
          now,
          until: row.backoffUntil,
        })
        .andWhere('(claimed_by IS NULL OR claimed_by = :owner)', { owner })
        .execute();
    }
    await endpoints.update(endpointId, { failingSince: null, backoffUntil: null });
  }

  /** Disables an active endpoint; false when it was not active (another instance did it). */
  async disable(manager: EntityManager, endpointId: number, reason: string): Promise<boolean> {
    const result = await manager
      .getRepository(WebhookEndpoint)
      .update({ id: endpointId, status: 'active' }, { status: 'disabled', disabledReason: reason });
    return (result.affected ?? 0) > 0;
  }

  /** Enables a disabled endpoint again, as new; false when it was not disabled. */
  async enable(manager: EntityManager, endpointId: number): Promise<boolean> {
    const result = await manager
      .getRepository(WebhookEndpoint)
      .update(
        { id: endpointId, status: 'disabled' },
        { status: 'active', disabledReason: null, failingSince: null, backoffUntil: null },
      );
    return (result.affected ?? 0) > 0;
  }

  /** Dead-letters what an endpoint just disabled still had waiting (it can be replayed). */
  async buryPending(manager: EntityManager, endpointId: number, now: Date): Promise<void> {
    await manager
      .getRepository(WebhookDelivery)
      .update(
        { endpointId, status: 'pending', claimedBy: IsNull() },
        { status: 'dead', lastError: 'the endpoint was disabled', nextAttemptAt: now },
      );
  }

  /** The team's owners, to tell them of a disabled endpoint. */
  ownersOf(manager: EntityManager, teamId: number): Promise<{ email: string; name: string }[]> {
    return manager
      .getRepository(WebhookEndpoint)
      .manager.createQueryBuilder()
      .select(['u.email AS email', 'u.name AS name'])
      .from('team_members', 'tm')
      .innerJoin('users', 'u', 'u.id = tm.user_id')
      .where('tm.team_id = :teamId', { teamId })
      .andWhere("tm.role = 'owner'")
      .getRawMany();
  }

  /**
   * Gives a dead-lettered delivery of the endpoint a new round of attempts, now, with the same
   * webhook-id; false when it is not dead (already replayed, by someone else at once too).
   */
  async replay(
    manager: EntityManager,
    endpointId: number,
    deliveryId: number,
    now: Date,
  ): Promise<boolean> {
    const result = await manager
      .getRepository(WebhookDelivery)
      .update(
        { id: deliveryId, endpointId, status: 'dead' },
        { status: 'pending', attempts: 0, nextAttemptAt: now, claimedUntil: null, claimedBy: null },
      );
    if ((result.affected ?? 0) === 0) return false;
    // Tried again on purpose: its days of failing count from its next failure (a stream stalled
    // on the dead batch sent nothing meanwhile, and must not be disabled by one more failure).
    await manager.getRepository(WebhookEndpoint).update({ id: endpointId }, { failingSince: null });
    return true;
  }
}
