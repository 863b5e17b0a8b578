import { ValidationPipe, type INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import hbs from 'hbs';
import { join } from 'node:path';
import { PROJECT_ROOT as ROOT } from './common/paths.js';
import { AllExceptionsFilter, isApiPath } from './common/filters/all-exceptions.filter.js';
import { ValidationError } from './common/errors/domain.error.js';
import { toFieldErrors, VALIDATOR_OPTIONS } from './common/validation/validate-input.js';

/** Everything the running app needs beyond its modules; main.ts and the e2e tests both call it. */
export function configureApp(app: INestApplication): INestApplication {
  const express = app as NestExpressApplication;
  express.disable('x-powered-by');
  express.set('etag', false);

  express.setBaseViewsDir(join(ROOT, 'views'));
  express.setViewEngine('hbs');
  express.set('view options', { layout: 'layouts/main' });
  hbs.registerPartials(join(ROOT, 'views', 'partials'));
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

/** API answers are per token and must never be kept by a browser or a proxy. */
function noStoreForApi(req: Request, res: Response, next: NextFunction): void {
  if (isApiPath(req.path)) res.setHeader('Cache-Control', 'no-store');
  next();
}
