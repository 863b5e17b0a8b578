import { Controller, Get, Inject, Res, ServiceUnavailableException } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  HealthCheckService,
  HealthIndicatorService,
  TypeOrmHealthIndicator,
  type HealthCheckResult,
  type HealthIndicatorResult,
} from '@nestjs/terminus';
import type { ServerResponse } from 'node:http';
import type { DataSource } from 'typeorm';
import { Public } from '../common/auth-policy.decorator.js';
import { DatabaseCluster } from '../database/database-cluster.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { DatabaseHealth } from '../database/database-health.js';
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
    private readonly database: DatabaseHealth,
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  /**
   * The process answers and its database pool is not wedged: 503 once the database has left
   * every query and every wait for a connection unanswered for DB_LIVENESS_STALL_MS and a ping
   * now gets no answer either, so that an orchestrator restarts the instance. A database that
   * refuses connections is no reason for a restart (readiness says it is down).
   */
  @Get('live')
  async live(@Res({ passthrough: true }) res: ServerResponse): Promise<object> {
    const stalledMs = this.database.stalledForMs();
    if (stalledMs < this.config.database.livenessStallMs || (await this.pings())) {
      return { status: 'ok' };
    }
    res.statusCode = 503;
    return {
      status: 'error',
      details: { database: { status: 'stalled', seconds: Math.round(stalledMs / 1000) } },
    };
  }

  /**
   * The database answers within a second and has every migration, and on a cluster node the
   * node is synced with the cluster's primary component; 503 with the check's details (the
   * pending migrations by name, the node's state) otherwise.
   */
  @Get('ready')
  async ready(
    @Res({ passthrough: true }) res: ServerResponse,
  ): Promise<HealthCheckResult | object | string> {
    try {
      return await this.health.check([
        () => this.db.pingCheck('database', { timeout: READY_TIMEOUT_MS }),
        () => this.migrations(),
        ...(this.cluster.kind === 'none' ? [] : [() => this.clusterNode()]),
      ]);
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      res.statusCode = 503;
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

  /** One query through the pool, bounded by its timeouts; any answer ends the stall. */
  private async pings(): Promise<boolean> {
    try {
      await this.dataSource.query('SELECT 1');
      return true;
    } catch {
      return false;
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
