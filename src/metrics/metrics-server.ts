import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { createServer, type Server } from 'node:http';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { Metrics } from './metrics.js';
import { isAuthorizedScrape } from './scrape-auth.js';

/** GET /metrics on a listener of its own (METRICS_PORT), apart from the public port. */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Metrics');
  private server?: Server;

  constructor(
    private readonly metrics: Metrics,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { port, host, token } = this.config.observability.metrics;
    if (port === null) return;
    const server = createServer((req, res) => {
      const path = (req.url ?? '').split('?')[0];
      if (req.method !== 'GET' || path !== '/metrics') {
        res
          .writeHead(404, { 'Content-Type': 'text/plain' })
          .end('404 Not Found: try GET /metrics\n');
      } else if (!isAuthorizedScrape(req.headers.authorization, token)) {
        res
          .writeHead(401, {
            'Content-Type': 'text/plain',
            'WWW-Authenticate': 'Bearer realm="metrics"',
          })
          .end('401 Unauthorized: send METRICS_TOKEN as a bearer token\n');
      } else {
        this.metrics.registry.metrics().then(
          (body) =>
            res.writeHead(200, { 'Content-Type': this.metrics.registry.contentType }).end(body),
          (error: unknown) => {
            this.logger.error(`Could not collect metrics: ${String(error)}`);
            res.writeHead(500, { 'Content-Type': 'text/plain' }).end('500 metrics unavailable\n');
          },
        );
      }
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    }).catch((error: unknown) => {
      throw new Error(
        `cannot listen on ${host}:${port} (METRICS_HOST, METRICS_PORT): ${String(error)}`,
        {
          cause: error,
        },
      );
    });
    this.server = server;
    this.logger.log(`Metrics on http://${host}:${port}/metrics`);
  }

  /** The port bound: METRICS_PORT, or the one the system chose for METRICS_PORT=0. */
  address(): { port: number } | null {
    const a = this.server?.address();
    return a && typeof a === 'object' ? { port: a.port } : null;
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }
}
