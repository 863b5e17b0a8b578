import { MethodNotAllowedException, NotFoundException } from '@nestjs/common';
import type { Express, NextFunction, Request, RequestHandler, Response } from 'express';

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
