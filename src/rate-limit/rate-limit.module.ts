import { Module } from '@nestjs/common';
import { Clock } from '../clock/clock.js';
import { Scheduler } from '../scheduler/scheduler.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { AccountLimiter } from './account-limiter.js';
import { AddressLimiter } from './address-limiter.js';
import {
  MemoryRateLimitStorage,
  RateLimitStorage,
  RedisRateLimitStorage,
} from './rate-limit.storage.js';
import { RouteLimitGuard } from './route-limit.guard.js';
import { SignInLimiter } from './sign-in-limiter.js';

/** Abuse limits for the API, sign-in and the mail people can make us send, counted in process or, with REDIS_URL, in Redis. */
@Module({
  providers: [
    {
      provide: RateLimitStorage,
      inject: [CONFIG, Clock, Scheduler],
      useFactory: (
        { security: { rateLimit } }: Config,
        clock: Clock,
        scheduler: Scheduler,
      ): RateLimitStorage | Promise<RateLimitStorage> => {
        if (rateLimit.redisUrl) {
          return RedisRateLimitStorage.connect(rateLimit.redisUrl, rateLimit.redisPrefix);
        }
        const storage = new MemoryRateLimitStorage(rateLimit.memoryMaxKeys, clock);
        scheduler.every('ended rate-limit windows', 60_000, () => storage.sweep());
        return storage;
      },
    },
    SignInLimiter,
    RouteLimitGuard,
    AddressLimiter,
    AccountLimiter,
  ],
  exports: [SignInLimiter, RouteLimitGuard, AddressLimiter, AccountLimiter, RateLimitStorage],
})
export class RateLimitModule {}
