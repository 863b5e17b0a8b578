import { describe, expect, it, jest } from '@jest/globals';
import { ManualClock, SystemClock } from './clock.js';

describe('ManualClock', () => {
  const START = Date.UTC(2026, 10, 26, 12, 0, 0);

  it('should fire timers when moved to their time, in the order they are due, and not before', () => {
    const clock = new ManualClock(START);
    const fired: string[] = [];
    clock.startTimer(3_000, () => fired.push('third'));
    clock.startTimer(1_000, () => fired.push('first'));
    clock.startTimer(2_000, () => fired.push('second'));
    clock.advance(999);
    expect(fired).toEqual([]);
    clock.advance(2_001);
    expect(fired).toEqual(['first', 'second', 'third']);
  });

  it('should fire a timer once however far the clock jumps, and one started as it fires on its own time', () => {
    const clock = new ManualClock(START);
    const fired: number[] = [];
    const tick = (): void => {
      fired.push(clock.nowMs());
      clock.startTimer(1_000, tick);
    };
    clock.startTimer(1_000, tick);
    clock.advance(60_000);
    expect(fired).toEqual([START + 60_000]);
    clock.advance(1_000);
    expect(fired).toEqual([START + 60_000, START + 61_000]);
  });

  it('should fire a timer when set to its time or later', () => {
    const clock = new ManualClock(START);
    const fire = jest.fn<() => void>();
    clock.startTimer(5_000, fire);
    clock.set(START + 4_999);
    expect(fire).not.toHaveBeenCalled();
    clock.set(new Date(START + 5_000));
    expect(fire).toHaveBeenCalledTimes(1);
  });

  it('should keep the delay each timer had left when the clock is moved back', () => {
    const clock = new ManualClock(START);
    const fire = jest.fn<() => void>();
    clock.startTimer(5_000, fire);
    clock.advance(2_000);
    clock.set(START - 86_400_000);
    clock.advance(2_999);
    expect(fire).not.toHaveBeenCalled();
    clock.advance(1);
    expect(fire).toHaveBeenCalledTimes(1);
  });

  it('should not fire a cancelled timer', () => {
    const clock = new ManualClock(START);
    const fire = jest.fn<() => void>();
    clock.startTimer(1_000, fire).cancel();
    clock.advance(2_000);
    expect(fire).not.toHaveBeenCalled();
  });

  it('should fire a timer with no delay on the next turn while the clock stands still', async () => {
    const clock = new ManualClock(START);
    const fire = jest.fn<() => void>();
    clock.startTimer(0, fire);
    expect(fire).not.toHaveBeenCalled();
    await new Promise((resolve) => setImmediate(resolve));
    expect(fire).toHaveBeenCalledTimes(1);
    expect(clock.nowMs()).toBe(START);
  });

  it('should give its time with six fractional digits when asked for the microseconds', () => {
    const clock = new ManualClock(START + 123);
    expect(clock.isoMicros()).toBe('2026-11-26T12:00:00.123000Z');
    clock.advance(1);
    expect(clock.isoMicros()).toBe('2026-11-26T12:00:00.124000Z');
  });
});

describe('SystemClock', () => {
  it('should fire a timer after its delay on a timer that keeps no process alive', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate'] });
    try {
      const setTimeout = jest.spyOn(global, 'setTimeout');
      const fire = jest.fn<() => void>();
      new SystemClock().startTimer(1_000, fire);
      expect((setTimeout.mock.results[0].value as NodeJS.Timeout).hasRef()).toBe(false);
      await jest.advanceTimersByTimeAsync(999);
      expect(fire).not.toHaveBeenCalled();
      await jest.advanceTimersByTimeAsync(1);
      expect(fire).toHaveBeenCalledTimes(1);
      setTimeout.mockRestore();
    } finally {
      jest.useRealTimers();
    }
  });

  it('should not fire a cancelled timer', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate'] });
    try {
      const fire = jest.fn<() => void>();
      new SystemClock().startTimer(1_000, fire).cancel();
      await jest.advanceTimersByTimeAsync(2_000);
      expect(fire).not.toHaveBeenCalled();
    } finally {
      jest.useRealTimers();
    }
  });
});
