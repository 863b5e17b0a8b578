import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AccessGuard } from './access.js';

/**
 * What every routed request passes, whichever door it came by: the guard that checks the route's
 * declared policy against who acts (found by the pages' middleware or the API's).
 */
@Module({
  providers: [{ provide: APP_GUARD, useClass: AccessGuard }],
})
export class HttpModule {}
