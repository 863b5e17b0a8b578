/**
 * How long after each failed attempt the next one comes (Standard Webhooks' suggested schedule):
 * 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then 14 h, about 41 hours from the first attempt to
 * the ninth and last. After that the delivery is dead-lettered (it can be replayed).
 */
export const RETRY_DELAYS_MS = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
  14 * 3_600_000,
];

export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/**
 * The wait after `attempts` failed attempts, with up to 10 % taken off at random so that the
 * retries of many deliveries that failed together do not arrive together; null: no more
 * attempts. Even with every wait cut by the most, the last attempt comes more than 24 hours
 * after the first.
 */
export function retryDelayMs(attempts: number, random: () => number = Math.random): number | null {
  const base = RETRY_DELAYS_MS[attempts - 1];
  if (base === undefined) return null;
  return Math.round(base * (1 - 0.1 * random()));
}
