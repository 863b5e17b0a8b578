import type { INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Express, RequestHandler } from 'express';
import cors from 'cors';
import hbs from 'hbs';
import { Logger } from 'nestjs-pino';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT as ROOT } from './common/paths.js';
import type { Config } from './config/config.js';
import { CONFIG } from './config/config.module.js';
import { Clock } from './clock/clock.js';
import { AllExceptionsFilter } from './http/all-exceptions.filter.js';
import { compressResponses } from './http/compression.js';
import { API_SECURITY_HEADERS, securityHeaders } from './http/security-headers.js';
import { Assets } from './web/assets.js';
import { PageErrors } from './web/page-errors.js';
import { jsonPathsOf, PageMethods } from './web/page-requests.js';
import { VIEW_HELPERS } from './web/view-helpers.js';
import { apiErrorAnswers } from './api/v1/api-errors.js';
import { API_DOCS_PATHS, apiDocs, isApiDocsPath } from './api/v1/openapi/api-docs.js';
import { AccessLog, observeRequests, type RequestWatchers } from './http/request-log.js';
import { Metrics } from './metrics/metrics.js';
import { SchemaBehindError, SchemaState } from './database/schema-state.js';

/**
 * Everything the running app needs beyond its modules (see createApp in app.factory.ts): the
 * views, and the one layer every request passes first. The pages' own steps are `WebModule`'s
 * (`PageRequests`), the API's `ApiV1Module`'s.
 */
export function configureApp(app: INestApplication): INestApplication {
  const express = app as NestExpressApplication;
  const config = app.get<Config>(CONFIG);
  express.disable('x-powered-by');
  // Client addresses and https come from X-Forwarded-* only behind a proxy we were told to trust.
  express.set('trust proxy', config.web.trustProxy);
  express.set('etag', false);
  // The API, and the route a secret scanner posts its reports to: JSON, no session, no CSRF.
  const jsonPath = jsonPathsOf(config);

  const watchers: RequestWatchers = {
    log: config.observability.logRequests ? app.get(AccessLog) : undefined,
    metrics: config.observability.metrics.enabled ? app.get(Metrics).watch : undefined,
  };
  app.useLogger(app.get(Logger));

  // The API's JSON gets its own, stricter list; pages (and the API's description) helmet's.
  const pageHeaders = securityHeaders();
  const apiHeaders = securityHeaders(API_SECURITY_HEADERS);

  const assets = app.get(Assets);
  const docs = config.observability.apiDocs ? apiDocs(app, assets) : undefined;
  const pageMethods = app.get(PageMethods);
  for (const path of docs ? API_DOCS_PATHS : []) pageMethods.allow(path, ['GET']);
  configureViews(express, assets, app.get(Clock));
  // Pages, their assets and the API's description are compressed; the API's answers are not
  // (a few hundred bytes each, where compressing costs more than it saves: docs/PERFORMANCE.md).
  const describeApi = docs && series([compressResponses(), docs]);
  // Everything before the routes is one layer of Express's, its steps run one after the other:
  // every layer Express passes costs each request a lookup (docs/PERFORMANCE.md).
  express.use(
    series([
      // First of all, so every answer carries its request id and every request is logged.
      observeRequests(watchers),
      (req, res, next) =>
        (jsonPath(req.path) && !isApiDocsPath(req.path) ? apiHeaders : pageHeaders)(req, res, next),
      ...(config.database.migrate ? [] : [schemaGate(app.get(SchemaState))]),
      // Only the listed origins, only reads; never a reflected arbitrary origin. A preflight is
      // answered here, before any session is read.
      ...(config.security.corsOrigins.length > 0
        ? [cors({ origin: config.security.corsOrigins, methods: ['GET', 'HEAD'] })]
        : []),
      // The API's answers are per token: never kept by a browser or a proxy. Its description is
      // answered here, before any route.
      (req, res, next) => {
        if (!jsonPath(req.path)) return next();
        if (describeApi && isApiDocsPath(req.path)) return describeApi(req, res, next);
        res.setHeader('Cache-Control', 'no-store');
        next();
      },
    ]),
  );
  app.useGlobalFilters(
    new AllExceptionsFilter(
      app.get(Clock),
      apiErrorAnswers,
      jsonPath,
      new PageErrors((path) => pageMethods.pageOf(path)),
    ),
  );
  return app;
}

function configureViews(express: NestExpressApplication, assets: Assets, clock: Clock): void {
  express.setBaseViewsDir(join(ROOT, 'views'));
  // Every page is drawn at the app's time: `now` is read from its clock at each render (Express
  // copies app.locals into each render's data), for times told relative to it ("3 minutes ago").
  Object.defineProperty((express.getHttpAdapter().getInstance() as Express).locals, 'now', {
    enumerable: true,
    get: () => clock.nowMs(),
  });
  express.setViewEngine('hbs');
  express.set('view options', { layout: 'layouts/main' });
  registerPartials(join(ROOT, 'views', 'partials'));
  for (const [name, helper] of Object.entries(VIEW_HELPERS)) hbs.registerHelper(name, helper);
  // Each page names a few assets: their URLs are looked up in a table made once.
  const urls = assets.urlsByName();
  hbs.registerHelper('asset', (name: string) => urls.get(name) ?? assets.url(name));
}

/**
 * With DB_MIGRATE=false, while the database lacks migrations every request but the health
 * checks is answered 503 (not a 500 from a missing table); one comparison once up to date.
 */
function schemaGate(schema: SchemaState): RequestHandler {
  return (req, _res, next) => {
    if (schema.pendingMigrations.length === 0 || req.path.startsWith('/health/')) return next();
    schema.upToDate().then((ok) => next(ok ? undefined : new SchemaBehindError()), next);
  };
}

/** hbs loads partials asynchronously; reading them here makes them ready for the first page. */
function registerPartials(dir: string): void {
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.hbs'))) {
    hbs.registerPartial(file.slice(0, -'.hbs'.length), readFileSync(join(dir, file), 'utf8'));
  }
}

/** Handlers run one after the other as one layer; an error skips the rest. */
function series(handlers: RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    let i = 0;
    const step = (error?: unknown): void => {
      if (error || i === handlers.length) return next(error);
      handlers[i++](req, res, step);
    };
    step();
  };
}
