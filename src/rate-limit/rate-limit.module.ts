import { Module } from '@nestjs/common';
import { Clock } from '../clock/clock.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { AccountLimiter } from './account-limiter.js';
import { AddressLimiter } from './address-limiter.js';
import { ApiRateLimiter } from './api-rate-limiter.js';
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
      inject: [CONFIG, Clock],
      useFactory: (
        { security: { rateLimit } }: Config,
        clock: Clock,
      ): RateLimitStorage | Promise<RateLimitStorage> =>
        rateLimit.redisUrl
          ? RedisRateLimitStorage.connect(rateLimit.redisUrl, rateLimit.redisPrefix)
          : new MemoryRateLimitStorage(rateLimit.memoryMaxKeys, clock),
    },
    ApiRateLimiter,
    SignInLimiter,
    RouteLimitGuard,
    AddressLimiter,
    AccountLimiter,
  ],
  exports: [
    ApiRateLimiter,
    SignInLimiter,
    RouteLimitGuard,
    AddressLimiter,
    AccountLimiter,
    RateLimitStorage,
  ],
})
export class RateLimitModule {}
