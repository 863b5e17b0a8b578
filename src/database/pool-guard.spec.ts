import { afterEach, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import type { Pool, PoolConnection } from 'mysql2';
import { DatabaseHealth } from './database-health.js';
import { NO_ANSWER_CODE, POOL_WAIT_CODE, PoolGuard, sessionLimits } from './pool-guard.js';

// Closing a connection is logged; not printed here.
beforeAll(() => Logger.overrideLogger(false));

type Callback = (error: Error | null, connection?: PoolConnection) => void;

/** A command as mysql2 queues it: answered through `onResult`, `end` when it is done. */
class FakeCommand extends EventEmitter {
  constructor(readonly onResult: (error: { code?: string } | null) => void) {
    super();
  }
}

/** A pooled connection whose server answers only what the test says it does. */
function fakeConnection() {
  const queued: FakeCommand[] = [];
  const destroyed: { code?: string }[] = [];
  const connection = {
    queued,
    destroyed,
    addCommand: (command: FakeCommand) => (queued.push(command), command),
    // Session limits and the flavour question: answered at once.
    query: (_options: unknown, callback: (error: null, rows: unknown) => void) =>
      callback(null, [{ version: '10.11.6-MariaDB' }]),
    release: jest.fn(),
    destroy: jest.fn(),
    stream: { destroy: (error: { code?: string }) => destroyed.push(error) },
  };
  return connection;
}

/** A pool that hands out connections when the test says so. */
function fakePool() {
  const pool = new EventEmitter() as EventEmitter & { waiting: Callback[] };
  pool.waiting = [];
  Object.assign(pool, { getConnection: (callback: Callback) => pool.waiting.push(callback) });
  return pool;
}

describe('PoolGuard', () => {
  let health: DatabaseHealth;
  let stalled: ReturnType<typeof jest.spyOn>;
  let pool: ReturnType<typeof fakePool>;

  beforeEach(() => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'performance'] });
    health = new DatabaseHealth();
    stalled = jest.spyOn(health, 'stalled');
    pool = fakePool();
    new PoolGuard(pool as unknown as Pool, 1_000, health);
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  const acquire = () => {
    const callback = jest.fn<Callback>();
    (pool as unknown as Pool).getConnection(callback as never);
    return callback;
  };

  it('should answer a wait for a connection that outlasts the timeout with an error, and pass the late connection on', async () => {
    const callback = acquire();
    await jest.advanceTimersByTimeAsync(999);
    expect(callback).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(1);
    expect(callback).toHaveBeenCalledWith(expect.objectContaining({ code: POOL_WAIT_CODE }));
    expect(stalled).toHaveBeenCalled();
    const late = fakeConnection();
    pool.waiting[0](null, late as unknown as PoolConnection);
    expect(late.release).toHaveBeenCalled();
    expect(callback).toHaveBeenCalledTimes(1);
  });

  it('should close a connection whose command had no answer within the timeout counted from its queueing, and leave one whose command was answered', async () => {
    const connection = fakeConnection();
    pool.emit('connection', connection);
    const callback = acquire();
    pool.waiting[0](null, connection as unknown as PoolConnection);
    await jest.advanceTimersByTimeAsync(0);
    expect(callback).toHaveBeenCalledWith(null, connection as unknown as PoolConnection);

    const answered = jest.fn();
    connection.addCommand(new FakeCommand(answered));
    connection.queued[0].onResult(null);
    expect(answered).toHaveBeenCalledWith(null);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(connection.destroyed).toEqual([]);
    expect(stalled).not.toHaveBeenCalled();

    const stuck = jest.fn();
    connection.addCommand(new FakeCommand(stuck));
    await jest.advanceTimersByTimeAsync(999);
    expect(connection.destroyed).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(connection.destroyed).toEqual([expect.objectContaining({ code: NO_ANSWER_CODE })]);
    expect(stalled).toHaveBeenCalled();
    // mysql2 then fails the command with the socket's error: its caller hears once.
    connection.queued[1].onResult({ code: NO_ANSWER_CODE });
    connection.queued[1].onResult({ code: NO_ANSWER_CODE });
    expect(stuck).toHaveBeenCalledTimes(1);
  });

  it('should tell MariaDB and MySQL to give up a tenth before the client, in their own terms, and lift both', () => {
    expect(sessionLimits('mariadb', 1_500)).toBe(
      'SET SESSION max_statement_time = 1.35, innodb_lock_wait_timeout = 1',
    );
    expect(sessionLimits('mysql', 3_000)).toBe(
      'SET SESSION max_execution_time = 2700, innodb_lock_wait_timeout = 2',
    );
    expect(sessionLimits('mariadb', 0)).toBe(
      'SET SESSION max_statement_time = 0, innodb_lock_wait_timeout = DEFAULT',
    );
  });
});
