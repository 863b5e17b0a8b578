import { Controller, Get, Res, ServiceUnavailableException } from '@nestjs/common';
import {
  HealthCheckService,
  TypeOrmHealthIndicator,
  type HealthCheckResult,
} from '@nestjs/terminus';
import type { Response } from 'express';
import { Public } from '../common/auth/auth-policy.decorator.js';

const READY_TIMEOUT_MS = 1000;

/** For load balancers and orchestrators: no authentication, no rate limit. */
@Controller('health')
@Public()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
  ) {}

  /** The process answers. */
  @Get('live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** The database answers within a second; 503 with the check's details otherwise. */
  @Get('ready')
  async ready(
    @Res({ passthrough: true }) res: Response,
  ): Promise<HealthCheckResult | object | string> {
    try {
      return await this.health.check([
        () => this.db.pingCheck('database', { timeout: READY_TIMEOUT_MS }),
      ]);
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      res.status(503);
      return error.getResponse();
    }
  }
}
