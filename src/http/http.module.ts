import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AccessGuard } from './access.js';
import { AccessLog } from './request-log.js';

/**
 * What every routed request passes, whichever door it came by: the guard that checks the route's
 * declared policy against who acts (found by the pages' middleware or the API's); and the access
 * log that each request's line is written to.
 */
@Module({
  providers: [{ provide: APP_GUARD, useClass: AccessGuard }, AccessLog],
  exports: [AccessLog],
})
export class HttpModule {}
