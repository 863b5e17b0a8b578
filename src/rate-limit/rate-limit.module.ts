import { Module } from '@nestjs/common';
import { Clock } from '../clock/clock.js';
import { Scheduler } from '../scheduler/scheduler.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { Metrics } from '../metrics/metrics.js';
import { AccountLimiter } from './account-limiter.js';
import {
  LIMIT_KINDS,
  uncountedOutcomeOf,
  type LimitKind,
  type UncountedHits,
} from './limit-kinds.js';
import { AddressLimiter } from './address-limiter.js';
import { MemoryRateLimitStorage, RateLimitStorage } from './rate-limit.storage.js';
import { RedisRateLimitStorage } from './redis-rate-limit.storage.js';
import { SignInLimiter } from './sign-in-limiter.js';

/** Every limit has its series in the metrics from the start, so a rate() alert works at once. */
function countUncountedHits(metrics: Metrics): UncountedHits {
  for (const kind of Object.keys(LIMIT_KINDS) as LimitKind[]) {
    metrics.uncountedHit(kind, uncountedOutcomeOf(kind), 0);
  }
  return (kind, outcome) => metrics.uncountedHit(kind, outcome);
}

/** Abuse limits for the API, sign-in and the mail people can make us send, counted in process or, with REDIS_URL, in Redis. */
@Module({
  providers: [
    {
      provide: RateLimitStorage,
      inject: [CONFIG, Clock, Scheduler, { token: Metrics, optional: true }],
      useFactory: (
        { security: { rateLimit } }: Config,
        clock: Clock,
        scheduler: Scheduler,
        metrics?: Metrics,
      ): RateLimitStorage | Promise<RateLimitStorage> => {
        const uncounted = metrics && countUncountedHits(metrics);
        if (rateLimit.redisUrl) {
          return RedisRateLimitStorage.connect({
            url: rateLimit.redisUrl,
            prefix: rateLimit.redisPrefix,
            timeoutMs: rateLimit.redisCommandTimeoutMs,
            uncounted,
          });
        }
        const storage = new MemoryRateLimitStorage(rateLimit.memoryMaxKeys, clock, uncounted);
        scheduler.every('ended rate-limit windows', 60_000, () => storage.sweep());
        return storage;
      },
    },
    SignInLimiter,
    AddressLimiter,
    AccountLimiter,
  ],
  exports: [SignInLimiter, AddressLimiter, AccountLimiter, RateLimitStorage],
})
export class RateLimitModule {}
