/**
 * Redis for the specs that share limits through it: the URL the suite's global set-up settled
 * on (test/support/redis-global-setup.ts), a server of the machine's or one it started.
 */
export const DEFAULT_TEST_REDIS_URL = 'redis://127.0.0.1:6379';

/** Set by the global set-up when no Redis could be had: the one line to say why. */
export const REDIS_MISSING = 'TEST_REDIS_MISSING';

/** The URL of the Redis these specs use; throws the set-up's one line when there is none. */
export function testRedisUrl(): string {
  const missing = process.env[REDIS_MISSING];
  if (missing) throw new Error(missing);
  return process.env.TEST_REDIS_URL ?? DEFAULT_TEST_REDIS_URL;
}
