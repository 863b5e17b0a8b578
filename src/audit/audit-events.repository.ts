import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Brackets, DataSource, EntityManager, LessThan, type Repository } from 'typeorm';
import { AuditEvent } from './audit-event.entity.js';
import type { AuditKind } from './audit-events.js';

/** Rows per INSERT statement, so a large batch stays within the databases' limits. */
const CHUNK = 500;

export interface AuditPageQuery {
  kind?: AuditKind;
  /** Only events older than this one (the next page). */
  beforeId?: number;
  limit: number;
}

export interface AuditExportQuery {
  since: Date;
  userId?: number;
  teamId?: number;
  kind?: AuditKind;
  /** Only events after this one, in time order (the next batch). */
  after?: { at: Date; id: number };
  limit: number;
}

@Injectable()
export class AuditEventsRepository {
  private readonly events: Repository<AuditEvent>;

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.events = dataSource.getRepository(AuditEvent);
  }

  /** Appends the rows; returns their ids, in the order of the rows. */
  async insert(manager: EntityManager, rows: Omit<AuditEvent, 'id'>[]): Promise<number[]> {
    const ids: number[] = [];
    for (let i = 0; i < rows.length; i += CHUNK) {
      const chunk = rows.slice(i, i + CHUNK);
      const result = await manager.getRepository(AuditEvent).insert(chunk);
      ids.push(...(await insertedIds(manager, result.raw, chunk.length)));
    }
    return ids;
  }

  /**
   * The names of the tokens the events name, by id (a token pruned since is absent). Read from
   * the tokens' table by name, so the log needs nothing of the tokens feature.
   */
  async tokenNames(ids: number[]): Promise<Map<number, string>> {
    if (ids.length === 0) return new Map();
    const rows: { id: number | string; name: string }[] = await this.events.manager
      .createQueryBuilder()
      .select(['t.id AS id', 't.name AS name'])
      .from('personal_access_tokens', 't')
      .where('t.id IN (:...ids)', { ids })
      .getRawMany();
    return new Map(rows.map((r) => [Number(r.id), r.name]));
  }

  /** The latest `event` recorded about one of a person's tokens, if the log still holds one. */
  findLatestForToken(userId: number, tokenId: number, event: string): Promise<AuditEvent | null> {
    return this.events
      .createQueryBuilder('e')
      .where('e.user_id = :userId AND e.token_id = :tokenId AND e.event = :event', {
        userId,
        tokenId,
        event,
      })
      .orderBy('e.occurred_at', 'DESC')
      .addOrderBy('e.id', 'DESC')
      .getOne();
  }

  /** A person's events: about their account, or done by them. Newest first (by occurred_at). */
  findForUser(userId: number, query: AuditPageQuery): Promise<AuditEvent[]> {
    const q = this.events
      .createQueryBuilder('e')
      .where(
        new Brackets((w) =>
          w
            .where('e.user_id = :userId', { userId })
            .orWhere('e.actor_user_id = :userId', { userId }),
        ),
      );
    return this.page(q, query);
  }

  /** A team's events, newest first. */
  findForTeam(teamId: number, query: AuditPageQuery): Promise<AuditEvent[]> {
    return this.page(
      this.events.createQueryBuilder('e').where('e.team_id = :teamId', { teamId }),
      query,
    );
  }

  /**
   * Events since a time, in the order they happened (an event recorded late, such as a token's
   * first use from an address, by when it happened), after `after`: the export's batches.
   */
  findSince(query: AuditExportQuery): Promise<AuditEvent[]> {
    const q = this.events
      .createQueryBuilder('e')
      .where('e.occurred_at >= :since', { since: query.since });
    if (query.after) {
      const { at, id } = query.after;
      q.andWhere(
        new Brackets((w) =>
          w
            .where('e.occurred_at > :at', { at })
            .orWhere('e.occurred_at = :at AND e.id > :id', { at, id }),
        ),
      );
    }
    if (query.kind) q.andWhere('e.event LIKE :prefix', { prefix: `${query.kind}.%` });
    if (query.userId !== undefined) {
      q.andWhere(
        new Brackets((w) =>
          w
            .where('e.user_id = :userId', { userId: query.userId })
            .orWhere('e.actor_user_id = :userId', { userId: query.userId }),
        ),
      );
    }
    if (query.teamId !== undefined) q.andWhere('e.team_id = :teamId', { teamId: query.teamId });
    return q.orderBy('e.occurred_at', 'ASC').addOrderBy('e.id', 'ASC').limit(query.limit).getMany();
  }

  /** Up to `limit` ids of events older than `before`. */
  async findIdsBefore(before: Date, limit: number): Promise<number[]> {
    const rows = await this.events.find({
      select: { id: true },
      where: { occurredAt: LessThan(before) },
      order: { id: 'ASC' },
      take: limit,
    });
    return rows.map((r) => Number(r.id));
  }

  async deleteByIds(manager: EntityManager, ids: number[]): Promise<number> {
    const result = await manager.getRepository(AuditEvent).delete(ids);
    return result.affected ?? ids.length;
  }

  private page(
    q: ReturnType<Repository<AuditEvent>['createQueryBuilder']>,
    query: AuditPageQuery,
  ): Promise<AuditEvent[]> {
    if (query.kind) q.andWhere('e.event LIKE :prefix', { prefix: `${query.kind}.%` });
    if (query.beforeId !== undefined) {
      // Older than the event the page before ended with, in the order things happened.
      const at = '(SELECT b.occurred_at FROM audit_events b WHERE b.id = :beforeId)';
      q.andWhere(
        new Brackets((w) =>
          w.where(`e.occurred_at < ${at}`).orWhere(`(e.occurred_at = ${at} AND e.id < :beforeId)`),
        ),
        { beforeId: query.beforeId },
      );
    }
    // By when things happened: an event written late (by the minute's usage flush) sorts
    // where it happened, not where it was written.
    return q
      .orderBy('e.occurred_at', 'DESC')
      .addOrderBy('e.id', 'DESC')
      .limit(query.limit)
      .getMany();
  }
}

/**
 * The ids one multi-row INSERT gave its rows. SQLite numbers them one after the other up to the
 * last; MariaDB returns them (TypeORM adds `RETURNING`); MySQL numbers them from the first by
 * `auto_increment_increment` (more than 1 in a cluster), without gaps within one simple INSERT.
 */
async function insertedIds(manager: EntityManager, raw: unknown, count: number): Promise<number[]> {
  if (manager.connection.options.type === 'better-sqlite3') {
    const last = Number(raw);
    return Array.from({ length: count }, (_, i) => last - count + 1 + i);
  }
  // MariaDB answers TypeORM's `RETURNING id` with the rows themselves.
  if (Array.isArray(raw)) return (raw as { id: number | string }[]).map((r) => Number(r.id));
  const first = Number((raw as { insertId: number | string }).insertId);
  let step = 1;
  if (count > 1) {
    const [row] = (await manager.query('SELECT @@auto_increment_increment AS step')) as {
      step: number | string;
    }[];
    step = Number(row.step);
  }
  return Array.from({ length: count }, (_, i) => first + i * step);
}
