import type { INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import {
  json,
  urlencoded,
  type Express,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import cors from 'cors';
import hbs from 'hbs';
import { Logger } from 'nestjs-pino';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT as ROOT } from './common/paths.js';
import type { Config } from './config/config.js';
import { CONFIG } from './config/config.module.js';
import { Clock } from './clock/clock.js';
import { AllExceptionsFilter, isApiPath } from './common/filters/all-exceptions.filter.js';
import { VIEW_HELPERS } from './web/view-helpers.js';
import { API_SECURITY_HEADERS, securityHeaders } from './common/http/security-headers.js';

import { compressResponses } from './common/http/compression.js';
import {
  AllowedMethods,
  ExpressHttpAdapter,
  refuseUnansweredMethods,
} from './common/http/express-adapter.js';
import { Assets } from './web/assets.js';
import { formPagesOf } from './web/form-page.js';
import { WebSession } from './web/session/web-session.js';
import { PageContext } from './web/page-context.js';
import { PageErrors } from './web/page-errors.js';
import { apiErrorAnswers } from './api/v1/api-errors.js';
import { API_DOCS_PATHS, apiDocs, isApiDocsPath } from './api/v1/openapi/api-docs.js';
import { AccessLog, observeRequests, type ResponseWatcher } from './logging/request-log.js';
import { Metrics } from './metrics/metrics.js';
import { SchemaBehindError, SchemaState } from './database/schema-state.js';
import { isTokenReportsPath, reportsTaken } from './token-reports/token-reports.module.js';

/** Everything the running app needs beyond its modules (see createApp in app.factory.ts). */
export function configureApp(app: INestApplication): INestApplication {
  const express = app as NestExpressApplication;
  const config = app.get<Config>(CONFIG);
  express.disable('x-powered-by');
  // Client addresses and https come from X-Forwarded-* only behind a proxy we were told to trust.
  express.set('trust proxy', config.web.trustProxy);
  express.set('etag', false);
  // The API, and the route a secret scanner posts its reports to: JSON, no session, no CSRF.
  const reports = reportsTaken(config);
  const jsonPath = (path: string): boolean =>
    isApiPath(path) || (reports && isTokenReportsPath(path));

  const watchers: ResponseWatcher[] = [];
  if (config.observability.logRequests) watchers.push(app.get(AccessLog).watcher());
  if (config.observability.metrics.enabled) watchers.push(app.get(Metrics).watch);
  app.useLogger(app.get(Logger));

  // The API's JSON gets its own, stricter list; pages (and the API's description) helmet's.
  const pageHeaders = securityHeaders();
  const apiHeaders = securityHeaders(API_SECURITY_HEADERS);

  const assets = new Assets()
    .addFolder(join(ROOT, 'public'))
    // The passkey pages' browser helper, served from here: no CDN.
    .add(
      'js/webauthn-browser.js',
      join(ROOT, 'node_modules/@simplewebauthn/browser/dist/bundle/index.umd.min.js'),
    );
  const docs = config.observability.apiDocs ? apiDocs(app, assets) : undefined;
  configureViews(express, assets, app.get(Clock));
  const refuseMethod = methodsCheck(app, assets, docs !== undefined, jsonPath);
  // Pages, their assets and the API's description are compressed; the API's answers are not
  // (a few hundred bytes each, where compressing costs more than it saves: docs/PERFORMANCE.md).
  const compress = compressResponses();
  const web = app.get(WebSession);
  const pageContext = app.get(PageContext);
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
      // One split: API requests one way, pages the other.
      apiOrPages(
        jsonPath,
        apiResponses(docs && series([compress, docs])),
        series([
          compress,
          assets.handler(),
          // Before the body parsers and CSRF: a form sent to a path that takes no such method is
          // answered 405 (or 404), not refused as a forgery of a form that does not exist.
          (req, res, next) =>
            SAFE_METHODS.has(req.method) ? next() : refuseMethod(req, res, next),
          urlencoded({ extended: true, limit: '100kb' }),
          json({ limit: '100kb' }),
          // Then who is signed in, with their teams for the header: a refused form's error page
          // has it too.
          (req, res, next) =>
            web.use(req, res, (refusal?: unknown) =>
              pageContext.use(req, res, (error?: unknown) => next(refusal ?? error)),
            ),
        ]),
      ),
    ]),
  );
  app.useGlobalFilters(
    new AllExceptionsFilter(app.get(Clock), apiErrorAnswers, jsonPath, new PageErrors()),
  );
  return app;
}

/** Methods that change nothing: CSRF protection lets them through, and so does the check before it. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

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
  hbs.registerHelper('asset', (name: string) => assets.url(name));
}

/**
 * A method nothing takes at a path that is served gets 405 with `Allow`: checked after every
 * route here, and returned for the pages' chain to check before the body parsers and CSRF.
 */
function methodsCheck(
  app: INestApplication,
  assets: Assets,
  docs: boolean,
  jsonPath: (path: string) => boolean,
): RequestHandler {
  const adapter = app.getHttpAdapter();
  if (!(adapter instanceof ExpressHttpAdapter)) {
    throw new Error('configureApp needs the app created with new ExpressHttpAdapter()');
  }
  const allowed = new AllowedMethods(adapter.getInstance(), formPagesOf(app));
  for (const path of docs ? API_DOCS_PATHS : []) allowed.add(path, ['GET']);
  for (const url of assets.urls()) allowed.add(url, ['GET']);
  const refuse = refuseUnansweredMethods(allowed, (path) => !jsonPath(path));
  adapter.useForUnrouted(refuse);
  return refuse;
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

/**
 * API requests (and the other paths `jsonPath` names) get `api`; page requests get `pages`: body
 * parsers (the API reads no body), then the session, CSRF protection and the signed-in user.
 */
function apiOrPages(
  jsonPath: (path: string) => boolean,
  api: RequestHandler,
  pages: RequestHandler,
): RequestHandler {
  return (req, res, next) => {
    if (jsonPath(req.path)) return api(req, res, next);
    // `OPTIONS *` and other targets that are not a path name no page: straight to the router.
    if (req.url[0] !== '/') return next();
    pages(req, res, next);
  };
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

/**
 * Every API answer is never kept by a browser or a proxy (answers are per token). Requests for
 * the API's description go their own way; every other one goes on to the API module, whose
 * middleware authenticates it (`ApiAuthentication`), and to its route.
 */
function apiResponses(docs: RequestHandler | undefined): RequestHandler {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (docs && isApiDocsPath(req.path)) {
      docs(req, res, next);
      return;
    }
    res.setHeader('Cache-Control', 'no-store');
    next();
  };
}
