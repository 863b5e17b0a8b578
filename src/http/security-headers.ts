import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import helmet from 'helmet';

/**
 * helmet's headers for every response: a Content-Security-Policy that allows only the app's own
 * scripts, styles and images (no 'unsafe-inline'), no framing, no referrer, no MIME sniffing.
 */
export const helmetMiddleware = () =>
  helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        fontSrc: ["'self'"],
        objectSrc: ["'none'"],
        baseUri: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
      },
    },
    referrerPolicy: { policy: 'no-referrer' },
    xFrameOptions: { action: 'deny' },
    strictTransportSecurity: false,
    // Express itself is told not to send X-Powered-By (configureApp).
    xPoweredBy: false,
  });

const HSTS = 'max-age=31536000; includeSubDomains';

/**
 * The headers helmet sets with the options above, read once by running its middleware on a
 * stand-in response. With these options they depend on nothing in the request, so every answer
 * gets the same list; an option that made helmet look at the request or remove a header would
 * make this throw at boot rather than go unnoticed.
 */
export function helmetHeaderList(): ReadonlyArray<readonly [string, string]> {
  const headers: Array<[string, string]> = [];
  const standIn = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers.push([name, String(value)]);
      return this;
    },
    removeHeader(name: string) {
      throw new Error(`helmet removes ${name}: securityHeaders() applies a fixed list`);
    },
  };
  const request = new Proxy({} as IncomingMessage, {
    get(_target, property) {
      throw new Error(
        `helmet reads req.${String(property)}: securityHeaders() applies a fixed list`,
      );
    },
  });
  let done = false;
  helmetMiddleware()(request, standIn as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error;
    done = true;
  });
  if (!done) throw new Error('helmet did not finish synchronously');
  return headers;
}

/**
 * What a JSON answer needs, as API providers send it: nothing may be loaded, framed or sniffed
 * from it, and no referrer leaves it. helmet's page headers (a policy for scripts and styles, the
 * cross-origin isolation of documents, the old IE options) say nothing about JSON; the policy here
 * is stricter than the pages' (`default-src 'none'`).
 */
export const API_SECURITY_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'"],
  ['Cross-Origin-Resource-Policy', 'same-origin'],
  ['Referrer-Policy', 'no-referrer'],
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
];

/**
 * A fixed list of headers on every response, set in one loop by one middleware (helmet's chain
 * of eleven cost each answer eleven calls and closures: docs/PERFORMANCE.md): helmet's, read
 * once, for pages; `API_SECURITY_HEADERS` for the API's JSON. HSTS is sent only over HTTPS,
 * where it means something.
 */
export function securityHeaders(
  headers: ReadonlyArray<readonly [string, string]> = helmetHeaderList(),
): RequestHandler {
  return (req: Request, res: Response, next: NextFunction): void => {
    for (const [name, value] of headers) res.setHeader(name, value);
    if (req.secure) res.setHeader('Strict-Transport-Security', HSTS);
    next();
  };
}
