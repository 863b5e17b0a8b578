import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { Request } from 'express';
import session from 'express-session';
import { randomBytes } from 'node:crypto';
import { Transactions } from '../database/transactions.js';
import { SessionsRepository } from './sessions.repository.js';
import { Clock } from '../clock/clock.js';
import { Scheduler } from '../scheduler/scheduler.js';

const TOUCH_SLACK_MS = 60_000;
const PRUNE_EVERY_MS = 5 * 60_000;

type Callback<T = void> = (err?: unknown, value?: T) => void;

/**
 * express-session's store over TypeORM, so that any instance serves any session on SQLite and
 * MySQL alike. The maintained stores are MySQL-only or unmaintained, hence this small one.
 */
@Injectable()
export class TypeormSessionStore extends session.Store implements OnModuleInit {
  private readonly logger = new Logger('Sessions');
  /** The id each request generated and has not stored yet. */
  private readonly created = new WeakMap<Request, string>();

  constructor(
    private readonly sessions: SessionsRepository,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly scheduler: Scheduler,
  ) {
    super();
  }

  override get(sid: string, callback: Callback<session.SessionData | null>): void {
    this.sessions
      .findLive(sid, this.clock.now())
      .then(
        (row) => callback(undefined, row ? (JSON.parse(row.data) as session.SessionData) : null),
        callback,
      );
  }

  /**
   * express-session's `genid`: a new session id, remembered for the request that made it. Only
   * that request may insert the session's row; every other write is an update, so a session
   * signed out (its row deleted) stays signed out even when a request that loaded it before
   * writes it back afterwards, on this instance or another.
   */
  generateId(req: Request): string {
    const id = randomBytes(24).toString('base64url');
    this.created.set(req, id);
    return id;
  }

  override set(sid: string, data: session.SessionData, callback?: Callback): void {
    // express-session hands over the request's Session, which holds its request.
    const req = (data as { req?: Request }).req;
    const insert = req !== undefined && this.created.get(req) === sid;
    if (insert) this.created.delete(req);
    const row = {
      id: sid,
      userId: data.userId ?? null,
      data: JSON.stringify(data),
      expiresAt: this.expiryOf(data),
      userAgent: data.activity?.userAgent || null,
      ip: data.activity?.ip || null,
      lastActiveAt: data.activity ? new Date(data.activity.at) : null,
    };
    // Each write is one statement, run alone in autocommit on MySQL/MariaDB: the session's row
    // is locked for one round trip, not three, so a sign-out racing with a burst of the
    // session's own requests waits behind short writes.
    this.transactions
      .runStatement((m) => (insert ? this.sessions.insert(m, row) : this.sessions.update(m, row)))
      .then(() => callback?.(), callback);
  }

  override destroy(sid: string, callback?: Callback): void {
    this.transactions
      .runStatement((m) => this.sessions.delete(m, sid))
      .then(() => callback?.(), callback);
  }

  override touch(sid: string, data: session.SessionData, callback?: Callback): void {
    this.transactions
      .runStatement((m) => this.sessions.extend(m, sid, this.expiryOf(data), TOUCH_SLACK_MS))
      .then(() => callback?.(), callback);
  }

  onModuleInit(): void {
    this.scheduler.every('expired sessions', PRUNE_EVERY_MS, () => this.prune());
  }

  async prune(): Promise<number> {
    try {
      const now = this.clock.now();
      return await this.transactions.run((m) => this.sessions.deleteExpired(m, now));
    } catch (error) {
      this.logger.warn(`Could not prune expired sessions: ${String(error)}`);
      return 0;
    }
  }

  private expiryOf(data: session.SessionData): Date {
    const expires = data.cookie?.expires;
    return expires ? new Date(expires) : new Date(this.clock.nowMs() + 86_400_000);
  }
}
