import {
  In,
  IsNull,
  Not,
  type EntityManager,
  type EntityTarget,
  type ObjectLiteral,
} from 'typeorm';

/** A claim on due rows: by `owner`, until `leaseUntil`. */
export interface Claim {
  now: Date;
  limit: number;
  owner: string;
  leaseUntil: Date;
}

/** The columns an outbox's rows share: `status`, `next_attempt_at`, `claimed_until`, `claimed_by`, `attempts`. */
interface LeasedRow extends ObjectLiteral {
  id: number;
  status: string;
  attempts: number;
  nextAttemptAt: Date;
  claimedUntil: Date | null;
  claimedBy: string | null;
}

/**
 * Rows grouped by a column (an outbox's deliveries by their endpoint): rows of at most `groups`
 * groups, at most `each` of a group, the earliest due, and none of the groups `busy` (those the
 * claimer is sending to already).
 */
export interface PerGroup<T> {
  column: string;
  key: (row: T) => number;
  groups: number;
  each: number;
  busy: number[];
}

/**
 * Takes up to `limit` pending rows of an outbox table that are due and that nobody holds, for
 * `owner` until `leaseUntil`, counting the attempt. On MySQL/MariaDB `FOR UPDATE SKIP LOCKED`
 * lets instances claim at once without waiting on each other or taking the same row; SQLite
 * runs one write transaction at a time anyway. Run it in a READ COMMITTED transaction
 * (`Transactions.run`'s `isolation`), so that it locks the rows it takes and not the gaps where
 * new rows are being queued.
 */
export async function claimDueRows<T extends LeasedRow>(
  manager: EntityManager,
  target: EntityTarget<T>,
  claim: Claim,
  group?: PerGroup<T>,
): Promise<T[]> {
  const query = manager
    .getRepository(target)
    .createQueryBuilder('m')
    .where("m.status = 'pending'")
    .andWhere('m.next_attempt_at <= :now', { now: claim.now })
    .andWhere('(m.claimed_until IS NULL OR m.claimed_until <= :now)', { now: claim.now })
    .orderBy('m.next_attempt_at', 'ASC')
    .addOrderBy('m.id', 'ASC')
    .limit(claim.limit);
  if (group && group.busy.length > 0) {
    query.andWhere(`m.${group.column} NOT IN (:...busy)`, { busy: group.busy });
  }
  if (manager.connection.options.type !== 'better-sqlite3') {
    query.setLock('pessimistic_write').setOnLocked('skip_locked');
  }
  const rows = group ? firstOfEach(await query.getMany(), group) : await query.getMany();
  if (rows.length === 0) return [];
  await manager
    .getRepository(target)
    .createQueryBuilder()
    .update()
    .set({
      claimedUntil: claim.leaseUntil,
      claimedBy: claim.owner,
      attempts: () => 'attempts + 1',
    } as never)
    .whereInIds(rows.map((r) => r.id))
    .execute();
  return rows.map((r) => ({ ...r, attempts: r.attempts + 1, claimedBy: claim.owner }));
}

/**
 * Hands rows `owner` claimed but will not send back: free to be claimed again at once, with the
 * attempt the claim counted taken back. A row another claimer holds by now is left alone.
 */
export async function releaseRows<T extends LeasedRow>(
  manager: EntityManager,
  target: EntityTarget<T>,
  ids: number[],
  owner: string,
): Promise<void> {
  if (ids.length === 0) return;
  await manager
    .getRepository(target)
    .createQueryBuilder()
    .update()
    .set({ claimedUntil: null, claimedBy: null, attempts: () => 'attempts - 1' } as never)
    .where({ id: In(ids), claimedBy: owner })
    .execute();
}

/**
 * When a pending row of an outbox table may next be claimed: the earliest retry of a row nobody
 * holds, or the end of the earliest lease (its holder may have stopped before it finished). Null
 * when nothing is pending.
 */
export async function nextChanceOf<T extends LeasedRow>(
  manager: EntityManager,
  target: EntityTarget<T>,
): Promise<Date | null> {
  const repo = manager.getRepository<LeasedRow>(target);
  const [free, held] = await Promise.all([
    repo.findOne({
      select: { id: true, nextAttemptAt: true },
      where: { status: 'pending', claimedUntil: IsNull() },
      order: { nextAttemptAt: 'ASC' },
    }),
    repo.findOne({
      select: { id: true, claimedUntil: true },
      where: { status: 'pending', claimedUntil: Not(IsNull()) },
      order: { claimedUntil: 'ASC' },
    }),
  ]);
  const times = [free?.nextAttemptAt, held?.claimedUntil].filter((at): at is Date => !!at);
  return times.length === 0 ? null : new Date(Math.min(...times.map((at) => at.getTime())));
}

/** The first `each` rows of each of the first `groups` groups, in the order given. */
function firstOfEach<T>(rows: T[], { key, groups, each }: PerGroup<T>): T[] {
  const taken = new Map<number, number>();
  return rows.filter((row) => {
    const count = taken.get(key(row));
    if (count === undefined && taken.size === groups) return false;
    taken.set(key(row), (count ?? 0) + 1);
    return (count ?? 0) < each;
  });
}
