/**
 * How long to wait before the next try of a message that has failed `attempts` times: `firstMs`
 * after the first failure, twice as long after each further one, at most six hours.
 */
export function retryDelayMs(attempts: number, firstMs: number): number {
  return Math.min(firstMs * 2 ** Math.max(0, attempts - 1), 6 * 3_600_000);
}
