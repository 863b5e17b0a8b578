import { Global, Module } from '@nestjs/common';
import { IdempotencyInterceptor } from '../idempotency/idempotency.interceptor.js';
import { IdempotencyStore } from '../idempotency/idempotency.store.js';
import { ApiAuditTrail } from './api-audit.interceptor.js';
import { NextPageLink } from './pagination.js';

/**
 * What `@ApiEndpoint` puts on a route besides its policy: global, so that a controller in any
 * module (a deployment's own, docs/extending.md) gets the same without importing anything.
 */
@Global()
@Module({
  providers: [IdempotencyStore, IdempotencyInterceptor, NextPageLink, ApiAuditTrail],
  exports: [IdempotencyStore, IdempotencyInterceptor, NextPageLink, ApiAuditTrail],
})
export class ApiConventionsModule {}
