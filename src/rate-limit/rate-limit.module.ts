import { Module } from '@nestjs/common';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { ApiRateLimiter } from './api-rate-limiter.js';
import {
  MemoryRateLimitStorage,
  RateLimitStorage,
  RedisRateLimitStorage,
} from './rate-limit.storage.js';
import { RouteLimitGuard } from './route-limit.guard.js';
import { SignInLimiter } from './sign-in-limiter.js';

/** Abuse limits for the API and for sign-in, counted in process or, with REDIS_URL, in Redis. */
@Module({
  providers: [
    {
      provide: RateLimitStorage,
      inject: [CONFIG],
      useFactory: ({
        security: { rateLimit },
      }: Config): RateLimitStorage | Promise<RateLimitStorage> =>
        rateLimit.redisUrl
          ? RedisRateLimitStorage.connect(rateLimit.redisUrl, rateLimit.redisPrefix)
          : new MemoryRateLimitStorage(rateLimit.memoryMaxKeys),
    },
    ApiRateLimiter,
    SignInLimiter,
    RouteLimitGuard,
  ],
  exports: [ApiRateLimiter, SignInLimiter, RouteLimitGuard, RateLimitStorage],
})
export class RateLimitModule {}
