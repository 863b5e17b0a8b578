import { ValidationPipe, type INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import hbs from 'hbs';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT as ROOT } from './common/paths.js';
import type { Config } from './config/config.js';
import { CONFIG } from './config/config.module.js';
import { AllExceptionsFilter, isApiPath } from './common/filters/all-exceptions.filter.js';
import { ValidationError } from './common/errors/domain.error.js';
import { toFieldErrors, VALIDATOR_OPTIONS } from './common/validation/validate-input.js';
import { VIEW_HELPERS } from './common/web/view-helpers.js';

/** Everything the running app needs beyond its modules; main.ts and the e2e tests both call it. */
export function configureApp(app: INestApplication): INestApplication {
  const express = app as NestExpressApplication;
  const config = app.get<Config>(CONFIG);
  express.disable('x-powered-by');
  // Client addresses and https come from X-Forwarded-* only behind a proxy we were told to trust.
  express.set('trust proxy', config.web.trustProxy);
  express.set('etag', false);

  express.setBaseViewsDir(join(ROOT, 'views'));
  express.setViewEngine('hbs');
  express.set('view options', { layout: 'layouts/main' });
  registerPartials(join(ROOT, 'views', 'partials'));
  for (const [name, helper] of Object.entries(VIEW_HELPERS)) hbs.registerHelper(name, helper);
  express.useStaticAssets(join(ROOT, 'public'), { index: false, maxAge: '1h' });

  express.use(noStoreForApi);
  app.useGlobalPipes(
    new ValidationPipe({
      ...VALIDATOR_OPTIONS,
      transform: true,
      exceptionFactory: (errors) => new ValidationError(toFieldErrors(errors)),
    }),
  );
  app.useGlobalFilters(new AllExceptionsFilter());
  app.enableShutdownHooks();
  return app;
}

/** hbs loads partials asynchronously; reading them here makes them ready for the first page. */
function registerPartials(dir: string): void {
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.hbs'))) {
    hbs.registerPartial(file.slice(0, -'.hbs'.length), readFileSync(join(dir, file), 'utf8'));
  }
}

/** API answers are per token and must never be kept by a browser or a proxy. */
function noStoreForApi(req: Request, res: Response, next: NextFunction): void {
  if (isApiPath(req.path)) res.setHeader('Cache-Control', 'no-store');
  next();
}
