import { afterEach, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { ManualClock, SystemClock } from '../clock/clock.js';
import { Scheduler, untilAbandoned } from './scheduler.js';

// A failing job is logged; these specs assert that it is, without printing it.
beforeAll(() => Logger.overrideLogger(false));

describe('Scheduler', () => {
  let scheduler: Scheduler;

  beforeEach(() => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate'] });
    scheduler = new Scheduler(new SystemClock());
  });
  afterEach(async () => {
    await scheduler.onApplicationShutdown();
    jest.useRealTimers();
  });

  it('should run periodic work every interval, first after the delay asked, on timers that keep no process alive', async () => {
    const setTimeout = jest.spyOn(global, 'setTimeout');
    const job = jest.fn<() => void>();
    scheduler.every('job', 1_000, job, 5_000);
    expect((setTimeout.mock.results[0].value as NodeJS.Timeout).hasRef()).toBe(false);
    await jest.advanceTimersByTimeAsync(4_999);
    expect(job).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(1);
    expect(job).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(3_000);
    expect(job).toHaveBeenCalledTimes(4);
    setTimeout.mockRestore();
  });

  it('should not start a periodic run while the last one is still under way', async () => {
    let finish!: () => void;
    const job = jest.fn(() => new Promise<void>((resolve) => (finish = resolve)));
    scheduler.every('slow', 1_000, job);
    await jest.advanceTimersByTimeAsync(3_000);
    expect(job).toHaveBeenCalledTimes(1);
    finish();
    await jest.advanceTimersByTimeAsync(1_000);
    expect(job).toHaveBeenCalledTimes(2);
    finish();
  });

  it('should abandon a round still under way at the round limit, aborting its signal, and run the job again when next due', async () => {
    await scheduler.onApplicationShutdown();
    scheduler = new Scheduler(new SystemClock(), 5_000);
    const warn = jest.spyOn(Logger.prototype, 'warn');
    const signals: AbortSignal[] = [];
    // The first round never ends; the next ones do.
    const job = jest.fn((signal: AbortSignal) => {
      signals.push(signal);
      return Promise.resolve();
    });
    job.mockImplementationOnce((signal) => {
      signals.push(signal);
      return new Promise<void>(() => undefined);
    });
    scheduler.every('stuck', 10_000, job);
    await jest.advanceTimersByTimeAsync(14_900);
    expect(job).toHaveBeenCalledTimes(1);
    expect(signals[0].aborted).toBe(false);
    await jest.advanceTimersByTimeAsync(200);
    expect(signals[0].aborted).toBe(true);
    expect(warn).toHaveBeenCalledWith(
      'stuck did not finish within 5 s: abandoned, it runs again when next due',
    );
    await jest.advanceTimersByTimeAsync(5_000);
    expect(job).toHaveBeenCalledTimes(2);
    expect(signals[1].aborted).toBe(false);
    // Nothing waits for the abandoned round: draining and stopping end.
    await scheduler.drain();
    warn.mockRestore();
  });

  it('should end untilAbandoned with the round, or with its abandonment, whichever comes first', async () => {
    const round = new AbortController();
    await expect(untilAbandoned(round.signal, Promise.resolve('done'))).resolves.toBe('done');
    const stuck = untilAbandoned(round.signal, new Promise<never>(() => undefined));
    round.abort(new Error('abandoned'));
    await expect(stuck).rejects.toThrow('abandoned');
    await expect(untilAbandoned(round.signal, Promise.resolve('late'))).rejects.toThrow(
      'abandoned',
    );
  });

  it('should keep the earlier of two asks for one job, and run it once', async () => {
    const late = jest.fn<() => void>();
    const soon = jest.fn<() => void>();
    scheduler.after('write', 5_000, late);
    scheduler.after('write', 0, soon);
    scheduler.after('write', 10_000, late);
    await jest.advanceTimersByTimeAsync(20_000);
    expect(soon).toHaveBeenCalledTimes(1);
    expect(late).not.toHaveBeenCalled();
  });

  it('should drain what is due now, and what that asks for in turn, but leave later work alone', async () => {
    const order: string[] = [];
    scheduler.after('first', 0, async () => {
      order.push('first');
      scheduler.after('second', 0, () => order.push('second'));
    });
    scheduler.after('retry', 60_000, () => order.push('retry'));
    await scheduler.drain();
    expect(order).toEqual(['first', 'second']);
  });

  it('should log a failing job and go on', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn');
    scheduler.after('broken', 0, () => {
      throw new Error('boom');
    });
    await scheduler.drain();
    expect(warn).toHaveBeenCalledWith('broken failed: Error: boom');
    warn.mockRestore();
  });

  it('should stop every timer at shutdown once the work under way has ended', async () => {
    let finish!: () => void;
    const running = jest.fn(() => new Promise<void>((resolve) => (finish = resolve)));
    const later = jest.fn<() => void>();
    scheduler.after('running', 0, running);
    await jest.advanceTimersByTimeAsync(0);
    expect(running).toHaveBeenCalledTimes(1);
    scheduler.after('later', 1_000, later);
    scheduler.every('periodic', 1_000, later);
    let stopped = false;
    const stopping = scheduler.onApplicationShutdown().then(() => (stopped = true));
    await jest.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    finish();
    await stopping;
    await jest.advanceTimersByTimeAsync(10_000);
    expect(later).not.toHaveBeenCalled();
  });
});

describe('Scheduler on a ManualClock', () => {
  let clock: ManualClock;
  let scheduler: Scheduler;

  beforeEach(() => {
    clock = new ManualClock(Date.UTC(2026, 0, 1));
    scheduler = new Scheduler(clock);
  });
  afterEach(() => scheduler.onApplicationShutdown());

  it('should run a job asked for later when the clock is moved to its time, and not before', async () => {
    const job = jest.fn<() => void>();
    scheduler.after('retry', 60_000, job);
    clock.advance(59_999);
    await scheduler.drain();
    expect(job).not.toHaveBeenCalled();
    clock.advance(1);
    await scheduler.drain();
    expect(job).toHaveBeenCalledTimes(1);
  });

  it('should run periodic work once when the clock jumps many intervals, then every interval after', async () => {
    const seen: number[] = [];
    scheduler.every('reminders', 3_600_000, () => void seen.push(clock.nowMs()), 60_000);
    clock.advance(59_000);
    await scheduler.drain();
    expect(seen).toEqual([]);
    const start = clock.nowMs();
    clock.advance(8 * 86_400_000);
    await scheduler.drain();
    // Once, at the time the clock jumped to, as a machine waking from sleep runs it once.
    expect(seen).toEqual([start + 8 * 86_400_000]);
    clock.advance(3_600_000);
    await scheduler.drain();
    expect(seen).toHaveLength(2);
  });

  it('should run a job asked for with no delay on its own while the clock stands still', async () => {
    let ran!: () => void;
    const done = new Promise<void>((resolve) => (ran = resolve));
    const at = clock.nowMs();
    scheduler.after('write', 0, ran);
    await done;
    expect(clock.nowMs()).toBe(at);
  });

  it('should leave work that is not due to drain until the clock reaches it', async () => {
    const order: string[] = [];
    scheduler.after('now', 0, () => order.push('now'));
    scheduler.after('later', 5_000, () => order.push('later'));
    await scheduler.drain();
    expect(order).toEqual(['now']);
    clock.advance(5_000);
    await scheduler.drain();
    expect(order).toEqual(['now', 'later']);
  });

  it('should run nothing when the clock moves after shutdown', async () => {
    const job = jest.fn<() => void>();
    scheduler.after('later', 1_000, job);
    scheduler.every('periodic', 1_000, job);
    await scheduler.onApplicationShutdown();
    clock.advance(10_000);
    await scheduler.drain();
    expect(job).not.toHaveBeenCalled();
  });
});
