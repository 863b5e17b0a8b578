import { setTimeout as delay } from 'node:timers/promises';

/**
 * How long `waitFor` waits by default. A guard against a hang, not a measure of speed: what it
 * waits for normally holds within milliseconds, and a busy machine must not fail a test.
 */
export const WAIT_TIMEOUT_MS = 60_000;

export interface WaitOptions {
  /** When to give up (default `WAIT_TIMEOUT_MS`). */
  timeoutMs?: number;
  /** The pause between two checks (default 20 ms). */
  intervalMs?: number;
  /** What the error says when the time is up. */
  message?: string | (() => string);
}

/**
 * Checks `check` until it gives a truthy value, and resolves with that value; fails after
 * `timeoutMs`. For work done in the background, after a response.
 */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  { timeoutMs = WAIT_TIMEOUT_MS, intervalMs = 20, message }: WaitOptions = {},
): Promise<Exclude<T, false | null | undefined | 0 | ''>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as Exclude<T, false | null | undefined | 0 | ''>;
    if (Date.now() > deadline) {
      const text = typeof message === 'function' ? message() : message;
      throw new Error(text ?? `condition not met within ${timeoutMs} ms`);
    }
    await delay(intervalMs);
  }
}

/** Waits `ms` milliseconds whatever happens (`waitFor` waits for something to happen). */
export function sleep(ms: number): Promise<void> {
  return delay(ms);
}
