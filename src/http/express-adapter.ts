import {
  MethodNotAllowedException,
  NotFoundException,
  StreamableFile,
  type NestApplicationOptions,
} from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express, NextFunction, Request, RequestHandler, Response } from 'express';
import type { Duplex } from 'node:stream';
import { createServer, IncomingMessage, ServerResponse, type ServerOptions } from 'node:http';
import type { Clock } from '../clock/clock.js';
import { EVERY_PATH } from '../common/http/every-path.js';
import { answerClientError } from './client-error.js';
import { JsonAnswer, writeJson } from './json-answer.js';

/**
 * Nest's Express adapter, with three differences: node:http creates every request and response
 * with Express's prototypes already in place, a route's object answer is written in one call,
 * and handlers can be placed after every route (`useForUnrouted`), where a method nothing takes
 * is answered 405 with `Allow`, or 404 (`AllowedMethods`, `refuseUnansweredMethods` below).
 *
 * Express otherwise swaps the prototype of each request and response as it takes them
 * (`Object.setPrototypeOf` in `app.handle`). V8 cannot keep such objects in their optimized
 * shapes, and much of what a request allocates then outlives young-generation collections: in
 * our measurements that one call cut Express's hello world from ~49k to ~10k requests/s, and made
 * V8 run a full mark-compact several times a second. Given the right prototypes from the start,
 * Express's call changes nothing. Everything else is Nest's adapter as it is.
 */
export class ExpressHttpAdapter extends ExpressAdapter {
  private readonly unrouted: RequestHandler[] = [];

  /**
   * `clock`: the app's, which stamps the envelope of what node's parser refuses;
   * `beforeAnswer`: what a redirect or a rendered page waits for (the page edge stores the
   * session it changed).
   */
  constructor(
    private readonly clock: Clock,
    private readonly beforeAnswer: (request: Request) => Promise<void> = () => Promise.resolve(),
  ) {
    super();
  }

  /** Runs `handler` for the requests no route answered, before Nest's not-found handler. */
  useForUnrouted(handler: RequestHandler): void {
    this.unrouted.push(handler);
  }

  /**
   * A route's object answer as JSON, written in one call (`writeJson`), with the status of a
   * `JsonAnswer` when it is one. Anything else (no body,
   * a string, a stream, an Error, a Content-Type of the route's own) is left to Nest's adapter.
   */
  override reply(response: Response, body: unknown, statusCode?: number): unknown {
    if (body instanceof JsonAnswer) {
      writeJson(response, body.body, body.status);
      return response;
    }
    if (
      body === null ||
      typeof body !== 'object' ||
      body instanceof Error ||
      body instanceof StreamableFile ||
      response.hasHeader('Content-Type')
    ) {
      return super.reply(response, body, statusCode);
    }
    writeJson(response, body, statusCode);
    return response;
  }

  /**
   * A route's redirect (`@Redirect`) leaves once `beforeAnswer` is done: a browser follows it
   * as soon as it has the headers, and the page it lands on must find the flash or the sign-in
   * in the session.
   */
  override redirect(response: Response, statusCode: number, url: string): unknown {
    this.beforeAnswer(response.req).then(
      () => super.redirect(response, statusCode, url),
      (error: unknown) => response.req.next?.(error),
    );
    return response;
  }

  /**
   * A route's page (`@Render`) is rendered once `beforeAnswer` is done, as a redirect leaves: a
   * page never shows what its session then failed to store (a two-factor secret to scan), and
   * the session's cookie is decided once the store has said whether the session still exists.
   */
  override render(response: Response, view: string, options: object): unknown {
    this.beforeAnswer(response.req).then(
      () => super.render(response, view, options),
      (error: unknown) => response.req.next?.(error),
    );
    return response;
  }

  // Nest sets its not-found handler once every route is registered: what goes in first runs
  // after all of them.
  override setNotFoundHandler(...args: Parameters<ExpressAdapter['setNotFoundHandler']>): unknown {
    for (const handler of this.unrouted) this.use(handler);
    return super.setNotFoundHandler(...args);
  }

  override initHttpServer(options: NestApplicationOptions): void {
    // Nest's own set-up first (its return503OnClosing middleware goes on the Express app).
    super.initHttpServer(options);
    // Nest's server stays for HTTPS, and when Nest tracks its connections (it listens on it);
    // Tessera uses neither (TLS ends at the proxy), and would lose only the speed-up. Otherwise
    // the server Nest made is replaced before anything listens on it.
    if (!options.httpsOptions && !options.forceCloseConnections) {
      this.httpServer = createServer(prototypedClasses(this.getInstance()), this.getInstance());
    }
    // What node's parser refuses is answered in the envelope too (client-error.ts).
    this.httpServer.on('clientError', (error: Error, socket: Duplex) =>
      answerClientError(this.clock, error, socket),
    );
  }
}

/**
 * Subclasses of node's IncomingMessage and ServerResponse whose prototypes Express then uses as
 * its own `app.request` and `app.response`: each inherits everything Express defines, and the
 * objects node creates from them already have the prototype Express would set.
 */
export function prototypedClasses(app: Express): ServerOptions {
  class ExpressRequest extends IncomingMessage {}
  Object.setPrototypeOf(ExpressRequest.prototype, app.request);
  app.request = ExpressRequest.prototype as unknown as Express['request'];
  class ExpressResponse extends ServerResponse {}
  Object.setPrototypeOf(ExpressResponse.prototype, app.response);
  app.response = ExpressResponse.prototype as unknown as Express['response'];
  return {
    IncomingMessage: ExpressRequest,
    ServerResponse: ExpressResponse as typeof ServerResponse,
  };
}

/** What this reads of Express 5's router: its route layers, and whether a path matches one. */
interface RouteLayer {
  route?: { path: string; methods: Record<string, boolean | undefined> };
  /** What the path matched, with its parameters; false when it does not match. */
  match(path: string): false | { params?: Record<string, string> };
}

/** Stands for every method, when a route takes them all (`@All()`). */
const ANY = '*';

/**
 * The methods something answers at each path: the routes Nest registered on Express, read from
 * Express's own router (so they match exactly as Express matches them), and the paths served
 * outside Nest's router (the API description, the assets), added by whoever serves them.
 */
export class AllowedMethods {
  private routes?: { layer: RouteLayer; methods: string[] }[];
  private readonly exact = new Map<string, string[]>();

  /**
   * `formPages`: the page each form's route belongs to (route path to page template, as
   * `/teams/:id/transfer` to `/teams/:id`), where a GET of the form's address leads.
   */
  constructor(
    private readonly app: Express,
    private readonly formPages = new Map<string, string>(),
  ) {}

  /** A path served outside Nest's router, and the methods it answers there. */
  add(path: string, methods: string[]): void {
    this.exact.set(path, withHead(methods));
  }

  /** The methods answered at `path` (HEAD wherever GET is); none when nothing is served there. */
  at(path: string): string[] {
    const found = new Set(this.exact.get(path));
    for (const { layer, methods } of this.registered()) {
      if (layer.match(path)) for (const method of methods) found.add(method);
    }
    return [...found];
  }

  /**
   * The page a form's address belongs to, for a GET of it (a reload after a form that answered
   * with a page, a shared link): its route's @FormPage, else the nearest path above it that is a
   * page, else the home page.
   */
  pageOf(path: string): string {
    for (const { layer } of this.registered()) {
      const template = layer.route && this.formPages.get(layer.route.path);
      const matched = template && layer.match(path);
      if (template && matched) {
        const params = matched.params ?? {};
        return template.replace(/:(\w+)/g, (_, name: string) =>
          encodeURIComponent(params[name] ?? ''),
        );
      }
    }
    for (let above = path.replace(/\/+$/, ''); above.lastIndexOf('/') > 0;) {
      above = above.slice(0, above.lastIndexOf('/'));
      if (this.at(above).includes('GET')) return above;
    }
    return '/';
  }

  /**
   * Read once, at the first request: Nest has registered every route before it listens. A
   * module's middleware for every path (`EVERY_PATH`) is registered as a route too, for every
   * method: it serves nothing, so it is not one.
   */
  private registered(): { layer: RouteLayer; methods: string[] }[] {
    this.routes ??= (this.app.router.stack as unknown as RouteLayer[])
      .filter((layer) => layer.route && layer.route.path !== EVERY_PATH)
      .map((layer) => ({ layer, methods: routeMethods(layer.route!.methods) }));
    return this.routes;
  }
}

function routeMethods(methods: Record<string, boolean | undefined>): string[] {
  return withHead(
    Object.keys(methods)
      .filter((method) => methods[method])
      .map((method) => (method === '_all' ? ANY : method.toUpperCase())),
  );
}

/** Express answers HEAD with a route's GET handler. */
function withHead(methods: string[]): string[] {
  if (!methods.includes('GET') || methods.includes('HEAD')) return methods;
  return methods.flatMap((method) => (method === 'GET' ? ['GET', 'HEAD'] : [method]));
}

/**
 * Answers a request whose method nothing takes at its path: 405 with `Allow` naming the methods
 * that are taken there, or 404 when nothing is served at that path at all; a GET of a form's
 * address among the pages (`isPage`) goes to the page the form is on. The errors go to
 * the exception filter like any other, so the API gets its envelope and the pages an error page.
 */
export function refuseUnansweredMethods(
  allowed: AllowedMethods,
  isPage: (path: string) => boolean = () => false,
): RequestHandler {
  return (req: Request, res: Response, next: NextFunction): void => {
    const methods = allowed.at(req.path);
    if (methods.includes(req.method) || methods.includes(ANY)) return next();
    if (methods.length === 0) return next(new NotFoundException());
    if ((req.method === 'GET' || req.method === 'HEAD') && isPage(req.path)) {
      // A form's address opened as a page: the page the form is on, not a 405.
      return res.redirect(303, allowed.pageOf(req.path));
    }
    res.setHeader('Allow', methods.join(', '));
    next(new MethodNotAllowedException());
  };
}
