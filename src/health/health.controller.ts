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
import { DatabaseCluster } from '../database/database-cluster.js';
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
    private readonly cluster: DatabaseCluster,
  ) {}

  /** The process answers. */
  @Get('live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * The database answers within a second and has every migration, and on a cluster node the
   * node is synced with the cluster's primary component; 503 with the check's details (the
   * pending migrations by name, the node's state) otherwise.
   */
  @Get('ready')
  async ready(
    @Res({ passthrough: true }) res: Response,
  ): Promise<HealthCheckResult | object | string> {
    try {
      return await this.health.check([
        () => this.db.pingCheck('database', { timeout: READY_TIMEOUT_MS }),
        () => this.migrations(),
        ...(this.cluster.kind === 'none' ? [] : [() => this.clusterNode()]),
      ]);
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      res.status(503);
      return error.getResponse();
    }
  }

  /**
   * A node cut off from its cluster, or still catching up, still answers a ping: its state says
   * whether it may serve. A node too wedged to say within the second is not ready either.
   */
  private async clusterNode(): Promise<HealthIndicatorResult<'cluster'>> {
    const check = this.indicators.check('cluster');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('no answer within a second')), READY_TIMEOUT_MS);
    });
    try {
      const state = await Promise.race([this.cluster.nodeState(), late]);
      return state.ready
        ? check.up({ kind: this.cluster.kind, ...state.detail })
        : check.down({ kind: this.cluster.kind, ...state.detail });
    } catch {
      // What the server said stays in the server: the probe is public.
      return check.down({ kind: this.cluster.kind, state: 'no answer' });
    } finally {
      clearTimeout(timer);
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
