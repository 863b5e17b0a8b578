import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { isIP } from 'node:net';
import type { EntityManager } from 'typeorm';
import type { Actor } from '../common/actor.js';
import { Transactions } from '../database/transactions.js';
import { isDatabaseUnavailable, isDeadlock } from '../common/errors/database-errors.js';
import { Scheduler } from '../scheduler/scheduler.js';
import type { AuditEvent } from './audit-event.entity.js';
import type { AuditEventName } from './audit-events.js';
import { AuditEventsRepository } from './audit-events.repository.js';
import { Clock } from '../clock/clock.js';
import { Events } from '../events/events.js';

declare module '../events/events.js' {
  interface DomainEvents {
    /**
     * An entry of the security log, published in the transaction of the change it records
     * (`recordIn`), before that commits and before the entry is written in it.
     */
    'audit.recording': { actor: Actor; entry: AuditEntry & { at: Date } };
    /**
     * Entries were written to the log, by id, in the transaction that writes them (the audit
     * streams' outbox queues them there).
     */
    'audit.written': { ids: number[] };
  }
}

export type AuditTarget = {
  type: 'token' | 'user' | 'team' | 'invitation' | 'service_account' | 'webhook';
  id: number;
};

export interface AuditEntry {
  event: AuditEventName;
  /** Whose security log it is in: by default the account the actor acts on. */
  userId?: number | null;
  /** The team whose audit log it is in. */
  teamId?: number | null;
  tokenId?: number | null;
  target?: AuditTarget;
  /** A few named facts; never a secret. Strings are cut to 200 characters. */
  detail?: Record<string, string | number | boolean | null>;
  at?: Date;
  /** By default those of the actor's request. */
  ip?: string | null;
  userAgent?: string | null;
}

/** Events waiting to be written, at most; past it, events are counted and logged as lost. */
export const MAX_PENDING_EVENTS = 10_000;
const WRITE_ATTEMPTS = 3;
const RETRY_MS = 5_000;
const DETAIL_VALUE_MAX = 200;
const WRITE_JOB = 'security log writes';

type Row = Omit<AuditEvent, 'id'>;

/** An event waiting to be written, and how many writes of it failed by themselves. */
interface Waiting {
  row: Row;
  attempts: number;
}

/**
 * Appends to the security log, in two ways. A change's entries (`recordIn`) are written in the
 * change's own transaction, as its last statements: the change and its entries commit together
 * or not at all, whatever becomes of the answer. What is no change (a refused sign-in, a
 * sign-out) is recorded with `record`, which never fails, nor waits on, what it records: the
 * event is built at once (with the actor's address, browser and session) and written a
 * moment later, with any others of the moment in one statement, off the caller's path. A write
 * that fails by itself is tried again twice, then the events are logged as lost (their names and
 * ids only); while the database cannot be reached they wait, within MAX_PENDING_EVENTS (past
 * it, they are counted and logged as lost), and a write whose answer was lost may have them
 * written twice, never not at all.
 * Events of the API's request path are not written here: the token usage's minute flush
 * writes them in its own transaction (`rows()` and the repository).
 */
@Injectable()
export class AuditLog implements OnApplicationShutdown {
  private readonly logger = new Logger('Audit');
  private pending: Waiting[] = [];
  private lost = 0;
  private writing: Promise<void> | undefined;
  /** A transaction's entries not yet written in it (`recordIn`). */
  private readonly unwritten = new WeakMap<EntityManager, Row[]>();

  constructor(
    private readonly events: AuditEventsRepository,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly scheduler: Scheduler,
    private readonly domainEvents: Events,
  ) {}

  /** Records the event soon; never throws. */
  record(actor: Actor, entry: AuditEntry): void {
    let row: Row;
    try {
      row = toRow(actor, entry, this.clock.now());
    } catch (error) {
      this.logger.warn(`Could not record ${entry.event}: ${String(error)}`);
      return;
    }
    if (this.pending.length >= MAX_PENDING_EVENTS) {
      this.lost++;
      return;
    }
    this.pending.push({ row, attempts: 0 });
    this.scheduler.after(WRITE_JOB, 0, () => this.write());
  }

  /**
   * Records the event in the transaction of `manager`, once its work is done: it commits with the
   * change, or rolls back with it. Before it is written, `audit.recording` is published in the
   * transaction (the webhook outbox writes the deliveries it calls for); once it is,
   * `audit.written` (the audit streams' outbox queues it). The entries of one transaction are
   * written in one statement.
   */
  recordIn(manager: EntityManager, actor: Actor, entry: AuditEntry): void {
    const at = entry.at ?? this.clock.now();
    const recorded = { ...entry, at };
    const row = toRow(actor, recorded, at);
    this.transactions.beforeCommit(manager, async (m) => {
      await this.domainEvents.publish(m, 'audit.recording', { actor, entry: recorded });
      let rows = this.unwritten.get(m);
      if (!rows) {
        rows = [];
        this.unwritten.set(m, rows);
        // After every step asked for so far: the entries those record join this statement.
        this.transactions.beforeCommit(m, (tm) => this.writeIn(tm));
      }
      rows.push(row);
    });
  }

  /** Writes everything recorded so far (before a page reads the log, and at shutdown). */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
    if (this.pending.length > 0) await this.write();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.flush();
  }

  /** Writes the entries `recordIn` gathered in the transaction of `m`, in one statement. */
  private async writeIn(m: EntityManager): Promise<void> {
    const rows = this.unwritten.get(m) ?? [];
    this.unwritten.delete(m);
    const ids = await this.events.insert(m, rows);
    await this.domainEvents.publish(m, 'audit.written', { ids });
  }

  private async write(): Promise<void> {
    while (this.writing) await this.writing;
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.writing = this.insert(batch).finally(() => (this.writing = undefined));
    await this.writing;
  }

  private async insert(batch: Waiting[]): Promise<void> {
    if (this.lost > 0) {
      this.logger.error(`${this.lost} security log events were not recorded: too many waiting`);
      this.lost = 0;
    }
    try {
      await this.transactions.run(async (m) => {
        // Copies: TypeORM writes the ids it was given into the rows it inserts, and a row sent
        // again after a failed write must get a new one, never the id of a rolled-back try.
        const ids = await this.events.insert(
          m,
          batch.map((b) => ({ ...b.row })),
        );
        await this.domainEvents.publish(m, 'audit.written', { ids });
      });
    } catch (error) {
      // While the database cannot be reached (a node lost, a stall), the events wait, within
      // MAX_PENDING_EVENTS, however long it lasts: only a write that fails by itself counts. A
      // write whose answer was lost as it committed may have stored them: they are written
      // again, rather than lost.
      const transient = isDatabaseUnavailable(error) || isDeadlock(error);
      const again = batch.filter((b) => transient || ++b.attempts < WRITE_ATTEMPTS);
      const given = batch.filter((b) => b.attempts >= WRITE_ATTEMPTS);
      if (given.length > 0) {
        const names = given.map((b) => `${b.row.event}(user ${b.row.userId ?? '-'})`).join(', ');
        this.logger.error(`Gave up recording ${given.length} security log events: ${names}`);
      }
      this.logger.warn(`Could not write the security log: ${String(error)}`);
      const room = Math.max(0, MAX_PENDING_EVENTS - this.pending.length);
      // Past the bound, those that find no room are counted, and logged as lost at the next write.
      this.lost += Math.max(0, again.length - room);
      this.pending.unshift(...again.slice(0, room));
      if (this.pending.length > 0) this.scheduler.after(WRITE_JOB, RETRY_MS, () => this.write());
    }
  }
}

const ACTOR_KINDS = {
  person: 'user',
  token: 'token',
  operator: 'operator',
  system: 'system',
  visitor: 'anonymous',
} as const;

/** The row an entry makes: who, from where and in which session come from the actor. */
export function toRow(actor: Actor, entry: AuditEntry, now: Date): Row {
  const person = actor.kind === 'person' || actor.kind === 'token' ? actor : undefined;
  const account = person?.userId ?? (actor.kind === 'operator' ? actor.userId : undefined);
  const client = 'client' in actor ? actor.client : undefined;
  return {
    occurredAt: entry.at ?? now,
    event: entry.event,
    actorUserId: person?.userId ?? null,
    actorKind: ACTOR_KINDS[actor.kind],
    userId: entry.userId !== undefined ? entry.userId : (account ?? null),
    teamId: entry.teamId ?? null,
    tokenId: entry.tokenId ?? (actor.kind === 'token' ? actor.tokenId : null),
    sessionHandle: actor.kind === 'person' ? actor.session : null,
    targetType: entry.target?.type ?? null,
    targetId: entry.target?.id ?? null,
    detail: entry.detail ? detailJson(entry.detail) : null,
    ip: addressOf(entry.ip !== undefined ? entry.ip : client?.ip),
    userAgent:
      (entry.userAgent !== undefined ? entry.userAgent : client?.userAgent)?.slice(0, 255) ?? null,
  };
}

function detailJson(detail: NonNullable<AuditEntry['detail']>): string {
  const cut = Object.fromEntries(
    Object.entries(detail).map(([k, v]) => [
      k,
      typeof v === 'string' ? v.slice(0, DETAIL_VALUE_MAX) : v,
    ]),
  );
  const json = JSON.stringify(cut);
  return json.length <= 1000 ? json : JSON.stringify({ truncated: true });
}

/** IPv4-mapped IPv6 addresses as IPv4; anything not an IP address, nothing. */
export function addressOf(ip: string | null | undefined): string | null {
  if (!ip) return null;
  const plain = ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
  return isIP(plain) ? plain : null;
}
