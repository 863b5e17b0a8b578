import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
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
  async scrape(@Req() req: Request, @Res() res: Response): Promise<void> {
    res.setHeader('Cache-Control', 'no-store');
    if (!isAuthorizedScrape(req.headers.authorization, this.config.observability.metrics.token)) {
      res.status(401).setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
      res.type('text/plain').send('401 Unauthorized: send METRICS_TOKEN as a bearer token\n');
      return;
    }
    res.type(this.metrics.registry.contentType).send(await this.metrics.registry.metrics());
  }
}
