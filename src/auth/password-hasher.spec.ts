import { describe, expect, it } from '@jest/globals';
import { HashingBusyError, Lane } from './password-hasher.js';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('Lane', () => {
  it('should run at most `running` tasks at once and start the next as one ends', async () => {
    const lane = new Lane(2, 10);
    const gates = [deferred(), deferred(), deferred()];
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const tasks = gates.map((gate, i) =>
      lane.run(async () => {
        running++;
        most = Math.max(most, running);
        await gate.promise;
        running--;
        order.push(i);
      }),
    );
    await Promise.resolve();
    expect(running).toBe(2);
    gates[1].resolve();
    await tasks[1];
    await new Promise((r) => setImmediate(r));
    expect(running).toBe(2);
    gates[0].resolve();
    gates[2].resolve();
    await Promise.all(tasks);
    expect(most).toBe(2);
    expect(order).toEqual([1, 0, 2]);
  });

  it('should refuse a task at once when the line is full, and take tasks again once it clears', async () => {
    const lane = new Lane(1, 1);
    const gate = deferred();
    const first = lane.run(() => gate.promise);
    const second = lane.run(() => Promise.resolve('second'));
    await expect(lane.run(() => Promise.resolve('third'))).rejects.toBeInstanceOf(HashingBusyError);
    gate.resolve();
    await first;
    await expect(second).resolves.toBe('second');
    await expect(lane.run(() => Promise.resolve('later'))).resolves.toBe('later');
  });

  it('should give the slot back when a task fails', async () => {
    const lane = new Lane(1, 0);
    await expect(lane.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(lane.run(() => Promise.resolve(1))).resolves.toBe(1);
  });
});
