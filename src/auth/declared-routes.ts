import { RequestMethod, type INestApplication } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { DiscoveryService, MetadataScanner, ModulesContainer, Reflector } from '@nestjs/core';
import { AUTH_POLICY, type AuthPolicy } from '../common/auth/auth-policy.decorator.js';

export interface DeclaredRoute {
  /** `GET`, `POST`, … */
  method: string;
  /** The full path as declared, with its parameters (`/teams/:id`). */
  path: string;
  /** What the route's decorators declare; undefined when they declare nothing. */
  policy: AuthPolicy | undefined;
}

/** Every route of the app's controllers, read from their metadata. */
export function declaredRoutes(app: INestApplication): DeclaredRoute[] {
  const reflector = new Reflector();
  const scanner = new MetadataScanner();
  const routes: DeclaredRoute[] = [];
  for (const wrapper of new DiscoveryService(app.get(ModulesContainer)).getControllers()) {
    const type = wrapper.metatype as (new (...args: never[]) => object) | null;
    if (!type) continue;
    const base = String(Reflect.getMetadata(PATH_METADATA, type) ?? '');
    for (const name of scanner.getAllMethodNames(type.prototype)) {
      const handler = (type.prototype as Record<string, () => unknown>)[name];
      const path = Reflect.getMetadata(PATH_METADATA, handler) as string | undefined;
      if (path === undefined) continue;
      routes.push({
        method: RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as number],
        path: `/${[base, path].filter((p) => p && p !== '/').join('/')}`.replace(/\/+/g, '/'),
        policy: reflector.getAllAndOverride<AuthPolicy | undefined>(AUTH_POLICY, [handler, type]),
      });
    }
  }
  return routes;
}

/**
 * The paths of the GET routes that declare the bearer policy and take no parameter
 * (`/api/v1/user/profile`). A request for one of them is authenticated in the API's branch
 * before Express and Nest route it, so a refused token is answered without routing; the guard
 * still checks every route's declared policy and the route's ability. A path not listed here
 * (another spelling Express would also route, such as a trailing slash or other letter case) is
 * authenticated by the guard as before.
 */
export function bearerRoutePaths(app: INestApplication): ReadonlySet<string> {
  return new Set(
    declaredRoutes(app)
      .filter((r) => r.method === 'GET' && r.policy?.kind === 'bearer' && !/[:*?(]/.test(r.path))
      .map((r) => r.path),
  );
}
