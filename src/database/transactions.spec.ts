import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import { Transactions, type RetriedWork } from './transactions.js';

/** What mysql2 answers when a cluster certified another node's write to the same rows first. */
const conflict = () =>
  Object.assign(new Error('Deadlock found when trying to get lock; try restarting transaction'), {
    code: 'ER_LOCK_DEADLOCK',
    errno: 1213,
  });

/** A MySQL data source whose transactions and manager are the test's. */
function mysqlSource(): DataSource {
  const manager = {} as EntityManager;
  return {
    options: { type: 'mariadb' },
    manager,
    transaction: (work: (m: EntityManager) => Promise<unknown>) => work(manager),
  } as unknown as DataSource;
}

function failingTimes(times: number, value = 'done') {
  let calls = 0;
  const work = async () => {
    calls++;
    if (calls <= times) throw conflict();
    return value;
  };
  return { work, calls: () => calls };
}

describe('Transactions', () => {
  // Each retry is logged at debug: not wanted among the test runner's output.
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(true));

  it('should run a statement again when the database refused it as a conflict, and say so', async () => {
    const transactions = new Transactions(mysqlSource());
    const retried: RetriedWork[] = [];
    transactions.onRetry((work) => retried.push(work));
    const statement = failingTimes(2);

    expect(await transactions.runStatement(statement.work)).toBe('done');
    expect(statement.calls()).toBe(3);
    expect(retried).toEqual(['statement', 'statement']);
  });

  it('should run a transaction again after a conflict, counted as a transaction', async () => {
    const transactions = new Transactions(mysqlSource());
    const retried: RetriedWork[] = [];
    transactions.onRetry((work) => retried.push(work));
    const work = failingTimes(1);

    expect(await transactions.run(work.work)).toBe('done');
    expect(work.calls()).toBe(2);
    expect(retried).toEqual(['transaction']);
  });

  it('should give up after five tries, and not run again what failed otherwise', async () => {
    const transactions = new Transactions(mysqlSource());
    const retried: RetriedWork[] = [];
    transactions.onRetry((work) => retried.push(work));
    const always = failingTimes(Infinity);
    await expect(transactions.runStatement(always.work)).rejects.toMatchObject({ errno: 1213 });
    expect(always.calls()).toBe(5);
    expect(retried).toHaveLength(4);

    let other = 0;
    await expect(
      transactions.runStatement(async () => {
        other++;
        throw Object.assign(new Error('duplicate'), { code: 'ER_DUP_ENTRY', errno: 1062 });
      }),
    ).rejects.toThrow('duplicate');
    expect(other).toBe(1);
    expect(retried).toHaveLength(4);
  });
});
