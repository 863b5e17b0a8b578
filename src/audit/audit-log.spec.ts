import { beforeEach, describe, expect, it, jest } from '@jest/globals';
import type { EntityManager } from 'typeorm';
import { Actors } from '../common/actor.js';
import { ManualClock } from '../clock/clock.js';
import type { Transactions } from '../database/transactions.js';
import type { Events } from '../events/events.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { AuditEvent } from './audit-event.entity.js';
import type { AuditEventsRepository } from './audit-events.repository.js';
import { AuditLog, MAX_PENDING_EVENTS } from './audit-log.js';

const failure = (code: string, errno?: number) =>
  Object.assign(new Error(code), { code, ...(errno ? { errno } : {}) });

describe('AuditLog', () => {
  const manager = {} as EntityManager;
  const insert = jest.fn<AuditEventsRepository['insert']>();
  const logged: string[] = [];
  let log: AuditLog;
  /** What each write was handed: the rows as they were at that moment. */
  let writes: Partial<AuditEvent>[][];

  beforeEach(() => {
    writes = [];
    logged.length = 0;
    insert.mockReset();
    const transactions = {
      run: (work: (m: EntityManager) => Promise<unknown>) => work(manager),
    } as unknown as Transactions;
    log = new AuditLog(
      { insert } as unknown as AuditEventsRepository,
      transactions,
      new ManualClock(Date.UTC(2026, 10, 27)),
      { after: () => undefined } as unknown as Scheduler,
      { publish: async () => undefined } as unknown as Events,
    );
    const record = (message: unknown) => logged.push(String(message));
    Object.assign(log, { logger: { warn: record, error: record, log: record } });
  });

  /** A write that gives the rows ids, as TypeORM's insert does, then fails with `error`. */
  const storedThenCut =
    (error: Error) => async (_m: EntityManager, rows: Partial<AuditEvent>[]) => {
      writes.push(rows.map((r) => ({ ...r })));
      rows.forEach((row, i) => (row.id = 280 + i));
      throw error;
    };
  const failing = (error: Error) => async (_m: EntityManager, rows: Partial<AuditEvent>[]) => {
    writes.push(rows.map((r) => ({ ...r })));
    throw error;
  };
  const stored = async (_m: EntityManager, rows: Partial<AuditEvent>[]) => {
    writes.push(rows.map((r) => ({ ...r })));
    return rows.map((_, i) => 500 + i);
  };

  const record = () => log.record(Actors.person(7), { event: 'account.password_changed' });

  it('should keep events while the database cannot be reached, however many writes fail, and write them once it can', async () => {
    record();
    for (let i = 0; i < 6; i++) {
      insert.mockImplementationOnce(failing(failure('ECONNREFUSED')));
      await log.flush();
    }
    insert.mockImplementationOnce(stored);
    await log.flush();
    expect(writes).toHaveLength(7);
    expect(writes.at(-1)).toEqual([expect.objectContaining({ event: 'account.password_changed' })]);
    expect(logged.join('\n')).not.toContain('Gave up');
  });

  it('should give up after three writes that fail by themselves, naming the events', async () => {
    record();
    for (let i = 0; i < 3; i++) {
      insert.mockImplementationOnce(failing(failure('ER_BAD_FIELD_ERROR')));
      await log.flush();
    }
    await log.flush();
    expect(writes).toHaveLength(3);
    expect(logged.join('\n')).toContain(
      'Gave up recording 1 security log events: account.password_changed(user 7)',
    );
  });

  it('should send an event again without the id a failed write gave it, also when that write may have stored it', async () => {
    record();
    insert.mockImplementationOnce(storedThenCut(failure('PROTOCOL_CONNECTION_LOST')));
    await log.flush();
    insert.mockImplementationOnce(storedThenCut(failure('ER_LOCK_DEADLOCK', 1213)));
    await log.flush();
    insert.mockImplementationOnce(stored);
    await log.flush();
    expect(writes).toHaveLength(3);
    for (const sent of writes) expect(sent[0]).not.toHaveProperty('id');
    expect(logged.join('\n')).not.toContain('Gave up');
  });

  it('should count, and say, what finds no room while writes fail', async () => {
    for (let i = 0; i < MAX_PENDING_EVENTS; i++) record();
    // The write takes them all; ten more are recorded while it fails.
    insert.mockImplementationOnce(async (m, rows) => {
      for (let i = 0; i < 10; i++) record();
      return failing(failure('ECONNREFUSED'))(m, rows);
    });
    await log.flush();
    insert.mockImplementation(stored);
    await log.flush();
    expect(logged.join('\n')).toContain(
      '10 security log events were not recorded: too many waiting',
    );
    expect(writes.at(-1)).toHaveLength(MAX_PENDING_EVENTS);
  });

  describe("in a change's transaction", () => {
    /** The steps `beforeCommit` was asked for, run as Transactions.run runs them. */
    async function transaction(work: (m: EntityManager) => void): Promise<void> {
      const steps: ((m: EntityManager) => Promise<void>)[] = [];
      const inTransaction = log as unknown as { transactions: Partial<Transactions> };
      inTransaction.transactions.beforeCommit = (_m, step) => void steps.push(step);
      work(manager);
      for (let i = 0; i < steps.length; i++) await steps[i](manager);
    }
    const published: [string, unknown][] = [];
    beforeEach(() => {
      published.length = 0;
      Object.assign(log, {
        domainEvents: {
          publish: async (_m: EntityManager, name: string, payload: unknown) => {
            published.push([name, payload]);
            // What a subscriber records in the transaction joins it, in the next statement.
            if (name === 'audit.recording' && published.length === 1) {
              log.recordIn(manager, Actors.operator(), { event: 'team.deleted' });
            }
          },
        },
      });
      insert.mockImplementation(stored);
    });

    it('should write its entries before it commits, in one statement, then say which were written', async () => {
      await transaction((m) => {
        log.recordIn(m, Actors.person(7), { event: 'account.password_changed' });
        log.recordIn(m, Actors.person(7), { event: 'account.email_changed' });
      });
      expect(writes.map((rows) => rows.map((r) => r.event))).toEqual([
        ['account.password_changed', 'account.email_changed', 'team.deleted'],
      ]);
      expect(published.map(([name]) => name)).toEqual([
        'audit.recording',
        'audit.recording',
        'audit.recording',
        'audit.written',
      ]);
      expect(published.at(-1)![1]).toEqual({ ids: [500, 501, 502] });
    });

    it('should fail the change with its write, and keep nothing to write later', async () => {
      insert.mockImplementation(failing(failure('ER_DISK_FULL')));
      await expect(
        transaction((m) => log.recordIn(m, Actors.person(7), { event: 'account.email_changed' })),
      ).rejects.toThrow('ER_DISK_FULL');
      insert.mockImplementation(stored);
      await log.flush();
      expect(writes).toHaveLength(1);
    });
  });
});
