import { Controller, Get, Res, ServiceUnavailableException } from '@nestjs/common';
import {
  HealthCheckService,
  HealthIndicatorService,
  TypeOrmHealthIndicator,
  type HealthCheckResult,
  type HealthIndicatorResult,
} from '@nestjs/terminus';
import type { Response } from 'express';
import { Public } from '../common/auth-policy.decorator.js';
import { SchemaState } from '../database/schema-state.js';

const READY_TIMEOUT_MS = 1000;

/** For load balancers and orchestrators: no authentication, no rate limit. */
@Controller('health')
@Public()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
    private readonly indicators: HealthIndicatorService,
    private readonly schema: SchemaState,
  ) {}

  /** The process answers. */
  @Get('live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * The database answers within a second and has every migration; 503 with the check's details
   * (the pending migrations by name) otherwise.
   */
  @Get('ready')
  async ready(
    @Res({ passthrough: true }) res: Response,
  ): Promise<HealthCheckResult | object | string> {
    try {
      return await this.health.check([
        () => this.db.pingCheck('database', { timeout: READY_TIMEOUT_MS }),
        () => this.migrations(),
      ]);
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      res.status(503);
      return error.getResponse();
    }
  }

  private async migrations(): Promise<HealthIndicatorResult<'migrations'>> {
    const check = this.indicators.check('migrations');
    // A probe looks again each time, so it sees `npm run migration:run` as soon as it has run.
    const pending = this.schema.pendingMigrations.length > 0 ? await this.schema.refresh() : [];
    if (pending.length === 0) return check.up();
    return check.down({ pending: [...pending] });
  }
}
