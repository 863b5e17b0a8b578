import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { addressOf, AuditLog } from '../audit/audit-log.js';
import { Transactions } from '../database/transactions.js';
import { ReferenceNotFoundError } from '../common/errors/domain.error.js';
import { TokenUsageRepository, type AddressUse } from './token-usage.repository.js';
import { TokensRepository, type LastUse } from './tokens.repository.js';
import { Clock } from '../clock/clock.js';
import { Scheduler } from '../scheduler/scheduler.js';

/** How often the gathered usage is written: every token's uses of a minute in one flush. */
export const USAGE_FLUSH_MS = 60_000;
/** Tokens gathered at most between two flushes; uses of further tokens are not counted. */
export const MAX_TRACKED_TOKENS = 10_000;
/** Addresses kept per token, in memory and in the database: the most recently used. */
export const MAX_ADDRESSES_PER_TOKEN = 5;
/** Days of counts kept per token (today and the 30 before it), so the page's 30 days are there. */
export const USAGE_DAYS_KEPT = 31;
const USER_AGENT_MAX = 255;
const DAY_MS = 86_400_000;

/** One authenticated API request, as the recorder needs it. */
export interface TokenUse {
  tokenId: number;
  /** The token's owner, whose security log its first use from an address goes in. */
  userId: number;
  at: number;
  ip: string | undefined;
  userAgent: string | undefined;
  /** Set when the request presented the value a regeneration replaced, still in its grace. */
  previousValidUntil?: Date;
}

interface AddressSeen {
  /** The latest use from the address, kept as its last use. */
  at: number;
  /** The first use from it since the last flush: when a first use from it happened. */
  firstAt: number;
  userAgent: string | null;
}

/** A known token refused (revoked, replaced or expired). */
export interface TokenRefusal {
  tokenId: number;
  userId: number;
  reason: string;
  at: number;
  ip: string | undefined;
  userAgent: string | undefined;
}

/** A check of another token by a calling token (introspection), for its audit event. */
export interface IntrospectionCheck {
  callerTokenId: number;
  callerUserId: number;
  /** The team the caller acts in: its audit log has the event. */
  teamId: number;
  /** The answer: active, inactive, or active but refused (its team, or an ability asked for). */
  outcome: 'active' | 'inactive' | 'refused';
  at: number;
  ip: string | undefined;
  userAgent: string | undefined;
}

/** What a calling token's checks of a minute add up to. */
interface PendingChecks {
  userId: number;
  teamId: number;
  checks: number;
  inactive: number;
  refused: number;
  at: number;
  ip: string | undefined;
  userAgent: string | undefined;
}

/** One refusal event per token in this time, on each instance. */
export const REFUSAL_EVENT_INTERVAL_MS = 60_000;

interface PendingUsage {
  userId: number;
  days: Map<string, number>;
  addresses: Map<string, AddressSeen>;
  previous?: { validUntil: Date; requests: number; lastAt: number };
}

/**
 * Gathers what tokens are used for (requests per UTC day, the addresses and clients they come
 * from, uses of a regenerated token's previous value) in memory, and writes it in one batch a
 * minute, off the request path: on an unref'd timer and when the app shuts down. Nothing on the
 * request path waits for it or queries for it. A crash loses at most the last minute's counts.
 * Memory is bounded whatever clients send: at most MAX_TRACKED_TOKENS tokens (they must be
 * valid ones), MAX_ADDRESSES_PER_TOKEN addresses each, user agents cut to 255 characters.
 */
@Injectable()
export class TokenUsageRecorder implements OnApplicationShutdown {
  private readonly logger = new Logger(TokenUsageRecorder.name);
  private pending = new Map<number, PendingUsage>();
  /** Refusals to record, one per token, and when each token's last one was recorded. */
  private refusals: TokenRefusal[] = [];
  private readonly refusalRecordedAt = new Map<number, number>();
  /** Introspections since the last flush, by calling token: one audit event each a minute. */
  private checks = new Map<number, PendingChecks>();
  private missed = 0;
  private flushing: Promise<void> | undefined;
  private day = { start: 0, end: 0, key: '' };

  constructor(
    private readonly usage: TokenUsageRepository,
    private readonly transactions: Transactions,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    private readonly scheduler: Scheduler,
  ) {}

  /** The minute's flush, from the first use on (an app nobody uses keeps no timer). */
  private flushEveryMinute(): void {
    this.scheduler.every('token usage', USAGE_FLUSH_MS, () => this.flush());
  }

  /**
   * Keeps a refusal for the security log unless one of the token's was kept in the last
   * minute; past MAX_TRACKED_TOKENS tokens refused in a minute, further ones are not kept.
   */
  recordRefusal(refusal: TokenRefusal): void {
    const last = this.refusalRecordedAt.get(refusal.tokenId);
    if (last !== undefined && refusal.at - last < REFUSAL_EVENT_INTERVAL_MS) return;
    if (last === undefined && this.refusalRecordedAt.size >= MAX_TRACKED_TOKENS) {
      for (const [id, at] of this.refusalRecordedAt) {
        if (refusal.at - at >= REFUSAL_EVENT_INTERVAL_MS) this.refusalRecordedAt.delete(id);
      }
      if (this.refusalRecordedAt.size >= MAX_TRACKED_TOKENS) return;
    }
    this.refusalRecordedAt.set(refusal.tokenId, refusal.at);
    this.refusals.push({ ...refusal, userAgent: refusal.userAgent?.slice(0, USER_AGENT_MAX) });
    this.flushEveryMinute();
  }

  /**
   * Counts a check made through introspection for the calling token's audit event: each
   * calling token's checks of the minute are one event (how many, how many inactive or
   * refused), so a service that checks every request it serves does not flood the log. Past
   * MAX_TRACKED_TOKENS calling tokens in a minute, further ones are not counted.
   */
  recordIntrospection(check: IntrospectionCheck): void {
    let entry = this.checks.get(check.callerTokenId);
    if (!entry) {
      if (this.checks.size >= MAX_TRACKED_TOKENS) return;
      entry = {
        userId: check.callerUserId,
        teamId: check.teamId,
        checks: 0,
        inactive: 0,
        refused: 0,
        at: check.at,
        ip: check.ip,
        userAgent: check.userAgent?.slice(0, USER_AGENT_MAX),
      };
      this.checks.set(check.callerTokenId, entry);
      this.flushEveryMinute();
    }
    entry.checks++;
    if (check.outcome === 'inactive') entry.inactive++;
    if (check.outcome === 'refused') entry.refused++;
  }

  record(use: TokenUse): void {
    let entry = this.pending.get(use.tokenId);
    if (!entry) {
      if (this.pending.size >= MAX_TRACKED_TOKENS) {
        this.missed++;
        return;
      }
      entry = { userId: use.userId, days: new Map(), addresses: new Map() };
      this.pending.set(use.tokenId, entry);
      this.flushEveryMinute();
    }
    const day = this.dayOf(use.at);
    entry.days.set(day, (entry.days.get(day) ?? 0) + 1);
    const ip = addressOf(use.ip);
    if (ip) this.seeAddress(entry.addresses, ip, use.at, use.userAgent);
    if (use.previousValidUntil) {
      const previous = (entry.previous ??= {
        validUntil: use.previousValidUntil,
        requests: 0,
        lastAt: use.at,
      });
      previous.requests++;
      previous.lastAt = Math.max(previous.lastAt, use.at);
    }
  }

  /**
   * Writes everything gathered so far in one transaction and starts gathering anew. A flush
   * already under way is awaited first. A failed write is logged and its counts are gathered
   * again for the next flush, as far as the bounds allow.
   */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    this.recordRefusals();
    this.recordIntrospections();
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    this.flushing = this.write(batch).finally(() => (this.flushing = undefined));
    await this.flushing;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.flush();
    await this.audit.flush();
  }

  private async write(batch: Map<number, PendingUsage>, retried = false): Promise<void> {
    const missed = this.missed;
    this.missed = 0;
    if (missed > 0) {
      this.logger.warn(
        `${missed} uses of tokens past the first ${MAX_TRACKED_TOKENS} of the minute were not counted`,
      );
    }
    const tokenIds = [...batch.keys()];
    const days = tokenIds.flatMap((tokenId) =>
      [...batch.get(tokenId)!.days].map(([day, requests]) => ({ tokenId, day, requests })),
    );
    const addresses: AddressUse[] = tokenIds.flatMap((tokenId) =>
      [...batch.get(tokenId)!.addresses].map(([ip, seen]) => ({
        tokenId,
        ip,
        lastUsedAt: new Date(seen.at),
        userAgent: seen.userAgent,
      })),
    );
    const oldestKept = utcDay(this.clock.nowMs() - (USAGE_DAYS_KEPT - 1) * DAY_MS);
    try {
      await this.transactions.run(async (m) => {
        const newAddresses: AddressUse[] = [];
        await this.usage.addDailyRequests(m, days);
        if (addresses.length > 0) {
          const known = await this.usage.findAddressKeys(m, tokenIds);
          // What looks new is added alone first: only the flush that adds it reports it.
          for (const a of addresses.filter((a) => !known.has(`${a.tokenId} ${a.ip}`))) {
            if (await this.usage.addAddressIfNew(m, a)) newAddresses.push(a);
          }
          await this.usage.saveAddresses(m, addresses);
          await this.usage.trimAddresses(m, tokenIds, MAX_ADDRESSES_PER_TOKEN);
        }
        await this.usage.trimDays(m, tokenIds, oldestKept);
        await this.recordNewAddresses(m, batch, newAddresses);
        for (const [tokenId, { previous }] of batch) {
          if (!previous) continue;
          const { validUntil, requests, lastAt } = previous;
          await this.usage.addPreviousValueUses(m, {
            tokenId,
            validUntil,
            requests,
            lastUsedAt: new Date(lastAt),
          });
        }
      });
    } catch (error) {
      // A token deleted since its use (with its account, service account or team) has nowhere
      // for its usage to go: it is dropped, and the others are written at once.
      if (error instanceof ReferenceNotFoundError && !retried && (await this.dropDeleted(batch))) {
        return batch.size > 0 ? this.write(batch, true) : undefined;
      }
      this.logger.warn(`Could not write the usage of ${batch.size} tokens: ${String(error)}`);
      this.gatherAgain(batch);
    }
  }

  /** Takes the tokens no longer stored out of `batch`; says whether there were any. */
  private async dropDeleted(batch: Map<number, PendingUsage>): Promise<boolean> {
    try {
      const existing = await this.usage.findExisting([...batch.keys()]);
      const gone = [...batch.keys()].filter((id) => !existing.has(id));
      for (const id of gone) batch.delete(id);
      return gone.length > 0;
    } catch {
      return false;
    }
  }

  /**
   * The first use from an address not among the token's recent ones, recorded once the usage
   * that shows it is written (in its transaction, so the webhook outbox writes
   * `token.used_from_new_address` with it), dated when that use happened.
   */
  private async recordNewAddresses(
    m: EntityManager,
    batch: Map<number, PendingUsage>,
    newAddresses: AddressUse[],
  ): Promise<void> {
    if (newAddresses.length === 0) return;
    const facts = await this.usage.findTokenFacts(m, [
      ...new Set(newAddresses.map((a) => a.tokenId)),
    ]);
    for (const a of newAddresses) {
      const { userId, addresses: seen } = batch.get(a.tokenId)!;
      const token = facts.get(a.tokenId);
      const client = { ip: a.ip, userAgent: a.userAgent };
      this.audit.recordIn(
        m,
        { kind: 'token', userId, tokenId: a.tokenId, client },
        {
          event: 'token.new_ip',
          teamId: token?.teamId ?? null,
          target: { type: 'token', id: a.tokenId },
          detail: { name: token?.name ?? '', ip: a.ip },
          at: new Date(seen.get(a.ip)!.firstAt),
        },
      );
    }
  }

  /** Hands the refusals gathered since the last flush to the security log. */
  private recordRefusals(): void {
    const refusals = this.refusals;
    this.refusals = [];
    for (const r of refusals) {
      const client = { ip: r.ip ?? null, userAgent: r.userAgent ?? null };
      this.audit.record(
        { kind: 'token', userId: r.userId, tokenId: r.tokenId, client },
        {
          event: 'token.refused',
          target: { type: 'token', id: r.tokenId },
          detail: { reason: r.reason },
          at: new Date(r.at),
        },
      );
    }
  }

  /** Hands each calling token's introspections since the last flush to the audit log. */
  private recordIntrospections(): void {
    const checks = this.checks;
    this.checks = new Map();
    for (const [tokenId, c] of checks) {
      const client = { ip: c.ip ?? null, userAgent: c.userAgent ?? null };
      this.audit.record(
        { kind: 'token', userId: c.userId, tokenId, client },
        {
          event: 'token.introspected',
          teamId: c.teamId,
          target: { type: 'token', id: tokenId },
          detail: { checks: c.checks, inactive: c.inactive, refused: c.refused },
          at: new Date(c.at),
        },
      );
    }
  }

  /** Puts a batch that could not be written back in front of what was gathered since. */
  private gatherAgain(batch: Map<number, PendingUsage>): void {
    for (const [tokenId, failed] of batch) {
      const entry = this.pending.get(tokenId);
      if (!entry) {
        if (this.pending.size < MAX_TRACKED_TOKENS) this.pending.set(tokenId, failed);
        continue;
      }
      for (const [day, n] of failed.days) entry.days.set(day, (entry.days.get(day) ?? 0) + n);
      for (const [ip, seen] of failed.addresses) {
        if (entry.addresses.has(ip)) continue;
        this.seeAddress(entry.addresses, ip, seen.at, seen.userAgent);
        const again = entry.addresses.get(ip);
        if (again) again.firstAt = Math.min(again.firstAt, seen.firstAt);
      }
      if (failed.previous && !entry.previous) entry.previous = failed.previous;
    }
  }

  /** Keeps the address's latest use; past the limit, the least recently used one goes. */
  private seeAddress(
    addresses: Map<string, AddressSeen>,
    ip: string,
    at: number,
    userAgent: string | null | undefined,
  ): void {
    const seen = addresses.get(ip);
    const agent = userAgent ? userAgent.slice(0, USER_AGENT_MAX) : null;
    if (seen) {
      if (at >= seen.at) Object.assign(seen, { at, userAgent: agent });
      seen.firstAt = Math.min(seen.firstAt, at);
      return;
    }
    if (addresses.size >= MAX_ADDRESSES_PER_TOKEN) {
      let oldest: string | undefined;
      for (const [key, value] of addresses) {
        if (oldest === undefined || value.at < addresses.get(oldest)!.at) oldest = key;
      }
      if (addresses.get(oldest!)!.at > at) return;
      addresses.delete(oldest!);
    }
    addresses.set(ip, { at, firstAt: at, userAgent: agent });
  }

  /** utcDay(at), worked out once a day rather than once a request. */
  private dayOf(at: number): string {
    if (at < this.day.start || at >= this.day.end) {
      const start = at - (at % DAY_MS);
      this.day = { start, end: start + DAY_MS, key: utcDay(start) };
    }
    return this.day.key;
  }
}

/** The UTC day of a time, as YYYY-MM-DD. */
export function utcDay(at: number): string {
  return new Date(at).toISOString().slice(0, 10);
}

/** A token's last use is written at most once in this time. */
const LAST_USED_INTERVAL_MS = 60_000;
/** Tokens whose last write is remembered; past it the map starts anew. */
const LAST_USED_MAX_TRACKED = 100_000;
/** Last uses written in one statement; more wait for the next. */
const LAST_USED_BATCH = 500;

/**
 * Records when a token was last used, at most once a minute per token and off the request
 * path: a use that is due is gathered, and what has gathered is written in one statement as
 * soon as the request path yields, never awaited by a request. A failed write is logged, not
 * thrown, and its tokens are written again on their next use. The in-process map only
 * throttles writes; it is never read to decide whether a token is valid.
 *
 * One statement for the lot rather than one each: the bench's 1,000 tokens all fall due in the
 * same second once a minute, and a write each (a query builder and a round trip apiece) held
 * the event loop long enough to show in that minute's slowest answers.
 */
@Injectable()
export class LastUsedRecorder implements OnApplicationShutdown {
  private readonly logger = new Logger(LastUsedRecorder.name);
  private readonly lastWritten = new Map<number, number>();
  private readonly due = new Map<number, number>();

  constructor(
    private readonly tokens: TokensRepository,
    private readonly transactions: Transactions,
    private readonly scheduler: Scheduler,
  ) {}

  record(tokenId: number, storedLastUsedAt: Date | null, now: number): void {
    if (storedLastUsedAt && now - storedLastUsedAt.getTime() < LAST_USED_INTERVAL_MS) return;
    const written = this.lastWritten.get(tokenId);
    if (written !== undefined && now - written < LAST_USED_INTERVAL_MS) return;
    // Writes that cannot keep up (the database is slow or gone) drop uses rather than memory.
    if (this.due.size >= LAST_USED_MAX_TRACKED) return;
    if (this.lastWritten.size >= LAST_USED_MAX_TRACKED) this.lastWritten.clear();
    this.lastWritten.set(tokenId, now);
    this.due.set(tokenId, now);
    this.scheduler.after('last use of tokens', 0, () => this.write());
  }

  async onApplicationShutdown(): Promise<void> {
    while (this.due.size > 0) await this.write();
  }

  /** Writes what has gathered, up to a batch; asks for another run when more is left. */
  private async write(): Promise<void> {
    const uses: LastUse[] = [];
    for (const [tokenId, at] of this.due) {
      if (uses.length === LAST_USED_BATCH) break;
      uses.push({ tokenId, at: new Date(at) });
      this.due.delete(tokenId);
    }
    if (this.due.size > 0) this.scheduler.after('last use of tokens', 0, () => this.write());
    if (uses.length === 0) return;
    try {
      await this.transactions.runStatement((m) =>
        this.tokens.touchLastUsed(m, uses, LAST_USED_INTERVAL_MS),
      );
    } catch (error: unknown) {
      for (const { tokenId } of uses) this.lastWritten.delete(tokenId);
      this.logger.warn(`Could not record the last use of ${uses.length} tokens: ${String(error)}`);
    }
  }
}
