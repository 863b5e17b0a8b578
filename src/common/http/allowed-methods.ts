import { MethodNotAllowedException, NotFoundException } from '@nestjs/common';
import type { Express, NextFunction, Request, RequestHandler, Response } from 'express';

/** What this reads of Express 5's router: its route layers, and whether a path matches one. */
interface RouteLayer {
  route?: { methods: Record<string, boolean | undefined> };
  match(path: string): unknown;
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

  constructor(private readonly app: Express) {}

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

  /** Read once, at the first request: Nest has registered every route before it listens. */
  private registered(): { layer: RouteLayer; methods: string[] }[] {
    this.routes ??= (this.app.router.stack as unknown as RouteLayer[])
      .filter((layer) => layer.route)
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
 * that are taken there, or 404 when nothing is served at that path at all. The errors go to
 * the exception filter like any other, so the API gets its envelope and the pages an error page.
 */
export function refuseUnansweredMethods(allowed: AllowedMethods): RequestHandler {
  return (req: Request, res: Response, next: NextFunction): void => {
    const methods = allowed.at(req.path);
    if (methods.includes(req.method) || methods.includes(ANY)) return next();
    if (methods.length === 0) return next(new NotFoundException());
    res.setHeader('Allow', methods.join(', '));
    next(new MethodNotAllowedException());
  };
}
