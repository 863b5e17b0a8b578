import { Inject, Injectable } from '@nestjs/common';
import { accountOf, type Actor } from '../common/actor.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { Transactions } from '../database/transactions.js';
import type { User } from '../users/user.entity.js';
import { UsersRepository } from '../users/users.repository.js';
import type { AuditEvent } from './audit-event.entity.js';
import type { AuditKind } from './audit-events.js';
import { AuditEventsRepository } from './audit-events.repository.js';
import { AuditLog } from './audit-log.js';
import { Clock } from '../clock/clock.js';

/** Events on a page of the log. */
export const AUDIT_PAGE_SIZE = 50;
const EXPORT_BATCH = 1000;
const PRUNE_BATCH = 1000;
const DAY_MS = 86_400_000;

/** One page of a log, with the event to continue from when there are older ones. */
export interface AuditPage {
  events: AuditEvent[];
  /** The names of the people the events name, by id (absent: an account that is gone). */
  people: Map<number, Pick<User, 'id' | 'name' | 'email'>>;
  /** The names of the tokens the events name, by id (absent: a token pruned since). */
  tokens: Map<number, string>;
  olderThan?: number;
}

/** Reading the security log: a person's own, a team's, the operator's export; and pruning it. */
@Injectable()
export class AuditService {
  private readonly retentionDays: number;

  constructor(
    private readonly events: AuditEventsRepository,
    private readonly log: AuditLog,
    private readonly transactions: Transactions,
    private readonly users: UsersRepository,
    private readonly clock: Clock,
    @Inject(CONFIG) config: Config,
  ) {
    this.retentionDays = config.tokens.auditRetentionDays;
  }

  /** The person's events (about their account, or done by them), newest first. */
  async forUser(actor: Actor, kind?: AuditKind, beforeId?: number): Promise<AuditPage> {
    await this.log.flush();
    const rows = await this.events.findForUser(accountOf(actor), {
      kind,
      beforeId,
      limit: AUDIT_PAGE_SIZE + 1,
    });
    return this.page(rows);
  }

  /** The latest `event` about one of the person's tokens (the log keeps it for a while). */
  async latestAboutToken(actor: Actor, tokenId: number, event: string): Promise<AuditEvent | null> {
    await this.log.flush();
    return this.events.findLatestForToken(accountOf(actor), tokenId, event);
  }

  /**
   * The team's events, newest first, `size` to a page (the pages' 50 by default); who may read
   * them is the caller's to check.
   */
  async forTeam(
    teamId: number,
    kind?: AuditKind,
    beforeId?: number,
    size = AUDIT_PAGE_SIZE,
  ): Promise<AuditPage> {
    await this.log.flush();
    const rows = await this.events.findForTeam(teamId, { kind, beforeId, limit: size + 1 });
    return this.page(rows, size);
  }

  /**
   * Every event since `since` (of one account, one team, one kind), in the order they happened,
   * read in batches: for `audit:export` and the pages' downloads.
   */
  async *export(query: {
    since: Date;
    userId?: number;
    teamId?: number;
    kind?: AuditKind;
  }): AsyncGenerator<AuditEvent> {
    await this.log.flush();
    let after: { at: Date; id: number } | undefined;
    for (;;) {
      const rows = await this.events.findSince({ ...query, after, limit: EXPORT_BATCH });
      yield* rows;
      if (rows.length < EXPORT_BATCH) return;
      const last = rows[rows.length - 1];
      after = { at: last.occurredAt, id: last.id };
    }
  }

  /**
   * Deletes events older than `olderThanDays` (AUDIT_RETENTION_DAYS by default), in batches so
   * no statement holds the table for long; returns how many went.
   */
  async prune(olderThanDays = this.retentionDays): Promise<{ deleted: number; before: Date }> {
    const before = new Date(this.clock.nowMs() - olderThanDays * DAY_MS);
    let deleted = 0;
    for (;;) {
      const ids = await this.events.findIdsBefore(before, PRUNE_BATCH);
      if (ids.length === 0) return { deleted, before };
      deleted += await this.transactions.run((m) => this.events.deleteByIds(m, ids));
    }
  }

  private async page(rows: AuditEvent[], size = AUDIT_PAGE_SIZE): Promise<AuditPage> {
    const events = rows.slice(0, size);
    const ids = new Set<number>();
    for (const e of events) {
      if (e.actorUserId !== null) ids.add(e.actorUserId);
      if (e.userId !== null) ids.add(e.userId);
    }
    const tokenIds = [...new Set(events.flatMap((e) => (e.tokenId === null ? [] : [e.tokenId])))];
    const [people, tokens] = await Promise.all([
      this.users.findNames([...ids]),
      this.events.tokenNames(tokenIds),
    ]);
    return {
      events,
      people: new Map(people.map((p) => [p.id, p])),
      tokens,
      olderThan: rows.length > size ? events[events.length - 1].id : undefined,
    };
  }
}
