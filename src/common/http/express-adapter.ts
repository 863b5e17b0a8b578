import { StreamableFile, type NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express, RequestHandler, Response } from 'express';
import { answerClientError } from './client-error.js';
import { createServer, IncomingMessage, ServerResponse, type ServerOptions } from 'node:http';

/**
 * Nest's Express adapter, with two differences: node:http creates every request and response
 * with Express's prototypes already in place, and handlers can be placed after every route.
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

  /** Runs `handler` for the requests no route answered, before Nest's not-found handler. */
  useForUnrouted(handler: RequestHandler): void {
    this.unrouted.push(handler);
  }

  /**
   * A route's object answer as JSON, written in one call: the same bytes and headers Express's
   * `res.json()` sends (Tessera sets no JSON replacer, spacing or escaping), without the
   * content-type parsing, charset and freshness checks `res.send()` runs for any body, which
   * cost an API answer more than writing it. Anything else (no body, a string, a stream, an
   * Error, a Content-Type of the route's own) is left to Nest's adapter.
   */
  override reply(response: Response, body: unknown, statusCode?: number): unknown {
    if (
      body === null ||
      typeof body !== 'object' ||
      body instanceof Error ||
      body instanceof StreamableFile ||
      response.hasHeader('Content-Type')
    ) {
      return super.reply(response, body, statusCode);
    }
    if (statusCode !== undefined) response.statusCode = statusCode;
    response.setHeader('Content-Type', 'application/json; charset=utf-8');
    const json = JSON.stringify(body);
    if (response.req.method === 'HEAD') {
      response.setHeader('Content-Length', Buffer.byteLength(json));
      return response.end();
    }
    return response.end(json);
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
    this.httpServer.on('clientError', answerClientError);
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
