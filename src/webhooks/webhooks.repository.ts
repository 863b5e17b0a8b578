import { Injectable } from '@nestjs/common';
import { In, IsNull, LessThan, MoreThan, Not, type EntityManager } from 'typeorm';
import { isUniqueViolation } from '../common/errors/database-errors.js';
import { claimDueRows, nextChanceOf, type Claim } from '../database/leased-rows.js';
import { WebhookDelivery } from './webhook-delivery.entity.js';
import { WebhookEndpoint } from './webhook-endpoint.entity.js';

export type NewDelivery = Pick<
  WebhookDelivery,
  'endpointId' | 'messageId' | 'eventType' | 'payload' | 'nextAttemptAt' | 'createdAt'
>;

/** Endpoints, scoped by their team (null: the operator's), and their deliveries. */
@Injectable()
export class WebhooksRepository {
  async insertEndpoint(
    manager: EntityManager,
    row: Pick<
      WebhookEndpoint,
      'uid' | 'teamId' | 'url' | 'events' | 'secret' | 'createdById' | 'createdAt'
    > &
      Partial<Pick<WebhookEndpoint, 'configKey'>>,
  ): Promise<WebhookEndpoint> {
    return manager.getRepository(WebhookEndpoint).save({
      configKey: null,
      ...row,
      kind: 'events' as const,
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

  claimDue(manager: EntityManager, claim: Claim): Promise<WebhookDelivery[]> {
    return claimDueRows(manager, WebhookDelivery, claim);
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

  /** Hands back, untried, deliveries claimed but not yet sent (at shutdown). */
  async release(manager: EntityManager, ids: number[], owner: string): Promise<void> {
    if (ids.length === 0) return;
    await manager
      .getRepository(WebhookDelivery)
      .createQueryBuilder()
      .update()
      .set({ claimedUntil: null, claimedBy: null, attempts: () => 'attempts - 1' })
      .where({ id: In(ids), claimedBy: owner })
      .execute();
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

  /** Deletes deliveries made before `before` that are no longer pending (the 30-day log). */
  async pruneFinished(manager: EntityManager, before: Date): Promise<number> {
    const result = await manager
      .getRepository(WebhookDelivery)
      .delete({ status: In(['delivered', 'dead']), createdAt: LessThan(before) });
    return result.affected ?? 0;
  }

  /** Notes whether the endpoint's deliveries are failing (since when) or succeed again. */
  async markFailing(manager: EntityManager, endpointId: number, since: Date | null): Promise<void> {
    const repo = manager.getRepository(WebhookEndpoint);
    if (since === null) await repo.update({ id: endpointId }, { failingSince: null });
    else await repo.update({ id: endpointId, failingSince: IsNull() }, { failingSince: since });
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
        { status: 'active', disabledReason: null, failingSince: null },
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
    return (result.affected ?? 0) > 0;
  }
}
