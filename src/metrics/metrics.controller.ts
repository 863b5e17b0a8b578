import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Public } from '../common/auth-policy.decorator.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { Metrics } from './metrics.js';
import { isAuthorizedScrape } from './scrape-auth.js';

/** GET /metrics on the main port, for a scraper that sends METRICS_TOKEN as a bearer token. */
@ApiExcludeController()
@Controller('metrics')
export class MetricsController {
  constructor(
    private readonly metrics: Metrics,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

  // Public to the app's own auth: the scraper's secret is not a personal access token.
  @Get()
  @Public()
  async scrape(@Req() req: IncomingMessage, @Res() res: ServerResponse): Promise<void> {
    res.setHeader('Cache-Control', 'no-store');
    if (!isAuthorizedScrape(req.headers.authorization, this.config.observability.metrics.token)) {
      res.writeHead(401, {
        'WWW-Authenticate': 'Bearer realm="metrics"',
        'Content-Type': 'text/plain; charset=utf-8',
      });
      res.end('401 Unauthorized: send METRICS_TOKEN as a bearer token\n');
      return;
    }
    const body = await this.metrics.registry.metrics();
    res.writeHead(200, { 'Content-Type': this.metrics.registry.contentType });
    res.end(body);
  }
}
