import { Inject, Injectable, type NestMiddleware } from '@nestjs/common';
import { HttpAdapterHost, ModulesContainer } from '@nestjs/core';
import {
  json,
  urlencoded,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import { join } from 'node:path';
import { compressResponses } from '../http/compression.js';
import { BodyTooDeepError, nestedDeeperThan } from '../http/json-depth.js';
import {
  AllowedMethods,
  ExpressHttpAdapter,
  refuseUnansweredMethods,
} from '../http/express-adapter.js';
import { PROJECT_ROOT } from '../common/paths.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { API_PATH, isTokenReportsPath } from '../http/json-paths.js';
import { reportsTaken } from '../token-reports/token-reports.module.js';
import { Assets } from './assets.js';
import { formPagesOf } from './form-page.js';
import { PageContext } from './page-context.js';
import { WebSession } from './session/web-session.js';

/**
 * The paths answered in JSON, with no session and no CSRF: the API, and the address a secret
 * scanner posts its reports to when reports are taken. Every other path is a page's.
 */
export function jsonPathsOf(config: Config): (path: string) => boolean {
  const reports = reportsTaken(config);
  return (path) => API_PATH.test(path) || (reports && isTokenReportsPath(path));
}

/** The pages' stylesheets, scripts and icons: public/, and the passkey pages' browser helper. */
export function pageAssets(): Assets {
  return (
    new Assets()
      .addFolder(join(PROJECT_ROOT, 'public'))
      // Served from here: no CDN.
      .add(
        'js/webauthn-browser.js',
        join(PROJECT_ROOT, 'node_modules/@simplewebauthn/browser/dist/bundle/index.umd.min.js'),
      )
  );
}

/** Methods that change nothing: CSRF protection lets them through, and so does the check before it. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Which methods are answered at each path, for the pages' method check and, after every route,
 * for any request no route took (405 with `Allow`, or 404). One for the app: the paths served
 * outside the routes (the assets, the API's description) are added to it.
 */
@Injectable()
export class PageMethods {
  private readonly allowed: AllowedMethods;
  readonly refuse: RequestHandler;

  constructor(
    @Inject(CONFIG) config: Config,
    adapterHost: HttpAdapterHost,
    modules: ModulesContainer,
    assets: Assets,
  ) {
    const adapter = adapterHost.httpAdapter;
    if (!(adapter instanceof ExpressHttpAdapter)) {
      throw new Error('The pages need the app created with new ExpressHttpAdapter()');
    }
    this.allowed = new AllowedMethods(adapter.getInstance(), formPagesOf(modules));
    for (const url of assets.urls()) this.allowed.add(url, ['GET']);
    const isJsonPath = jsonPathsOf(config);
    this.refuse = refuseUnansweredMethods(this.allowed, (path) => !isJsonPath(path));
    // After every route: a method nothing takes at a served path is answered 405 with `Allow`.
    adapter.useForUnrouted(this.refuse);
  }

  /** The page a form's address belongs to (`/teams/:id/transfer` to `/teams/:id`). */
  pageOf(path: string): string {
    return this.allowed.pageOf(path);
  }

  /** A path served outside the routes (the API's description) and the methods it answers. */
  allow(path: string, methods: string[]): void {
    this.allowed.add(path, methods);
  }
}

/**
 * What every page request goes through before its route, registered by `WebModule` for every
 * path: compression, the assets, the method check, the body parsers, then the session and CSRF
 * (`WebSession`) and who is signed in (`PageContext`). One Express layer whose steps run one
 * after the other (each layer Express passes costs every request a lookup: docs/PERFORMANCE.md);
 * API requests pass it at the cost of one test of their path.
 */
@Injectable()
export class PageRequests implements NestMiddleware {
  private readonly isJsonPath: (path: string) => boolean;
  private readonly steps: RequestHandler[];

  constructor(
    @Inject(CONFIG) config: Config,
    methods: PageMethods,
    assets: Assets,
    session: WebSession,
    context: PageContext,
  ) {
    this.isJsonPath = jsonPathsOf(config);
    this.steps = [
      compressResponses(),
      assets.handler(),
      // Before the body parsers and CSRF: a form sent to a path that takes no such method is
      // answered 405 (or 404), not refused as a forgery of a form that does not exist.
      (req, res, next) => (SAFE_METHODS.has(req.method) ? next() : methods.refuse(req, res, next)),
      urlencoded({ extended: true, limit: '100kb' }),
      json({ limit: '100kb' }),
      // A form nests at most as deep as qs allows (5); only a JSON body is walked.
      (req, _res, next) =>
        next(
          req.body !== undefined && req.is('json') && nestedDeeperThan(req.body)
            ? new BodyTooDeepError()
            : undefined,
        ),
      // Then who is signed in, with their teams for the header: a refused form's error page has
      // it too.
      (req, res, next) =>
        session.use(req, res, (refusal?: unknown) =>
          context.use(req, res, (error?: unknown) => next(refusal ?? error)),
        ),
    ];
  }

  use(req: Request, res: Response, next: NextFunction): void {
    // `OPTIONS *` and other targets that are not a path name no page: straight to the router.
    if (req.url[0] !== '/' || this.isJsonPath(req.path)) return next();
    let i = 0;
    const step = (error?: unknown): void => {
      if (error || i === this.steps.length) return next(error);
      this.steps[i++](req, res, step);
    };
    step();
  }
}
