import { RequestMethod, type INestApplication } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import { DiscoveryService, MetadataScanner, ModulesContainer, Reflector } from '@nestjs/core';
import { AUTH_POLICY, type AuthPolicy } from '../../src/common/auth-policy.decorator.js';
import { INPUT_PIPE } from '../../src/common/validation/form.decorator.js';
import { API_INPUT_PIPE } from '../../src/api/v1/conventions/api-input.js';

export interface DeclaredRoute {
  /** `GET`, `POST`, … */
  method: string;
  /** The full path as declared, with its parameters (`/teams/:id`). */
  path: string;
  /** What the route's decorators declare; undefined when they declare nothing. */
  policy: AuthPolicy | undefined;
  /**
   * The parameters that take the whole body or query string without a validating pipe (the
   * pages' `INPUT_PIPE` or the API's `API_INPUT_PIPE`), by index.
   */
  unvalidatedInputs: number[];
}

interface RouteArg {
  index: number;
  data?: unknown;
  pipes?: unknown[];
}

function unvalidatedInputs(type: object, name: string): number[] {
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, type.constructor, name) ?? {}) as Record<
    string,
    RouteArg
  >;
  return Object.entries(args)
    .filter(([key, arg]) => {
      const kind = Number(key.split(':')[0]);
      const input = kind === RouteParamtypes.BODY || kind === RouteParamtypes.QUERY;
      const validated = arg.pipes?.includes(INPUT_PIPE) || arg.pipes?.includes(API_INPUT_PIPE);
      return input && arg.data === undefined && !validated;
    })
    .map(([, arg]) => arg.index);
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
        unvalidatedInputs: unvalidatedInputs(type.prototype, name),
      });
    }
  }
  return routes;
}
