import type { Type } from '@nestjs/common';
import type { DiscoveryService } from '@nestjs/core';
import { AUTH_POLICY, type AuthPolicy } from '../../common/auth-policy.decorator.js';
import type { AbilityCatalog } from '../../config/abilities.config.js';
import { API_ENDPOINT, type ApiEndpointMeta } from './openapi/api-endpoint.decorator.js';

/** A handler of an API endpoint (`@ApiEndpoint`), with the controller it is on. */
interface Endpoint {
  controller: Type;
  name: string;
  ability: string | undefined;
  protocol: ApiEndpointMeta['protocol'];
}

/**
 * The controllers of the API's endpoints, by how their requests are read: the API's conventions
 * (a JSON body), or a standard's protocol (a form or JSON: introspection).
 */
export interface ApiControllers {
  conventional: Type[];
  protocol: Type[];
}

/** The handlers of a controller that are API endpoints. */
export function endpointsOf(controller: Type): Endpoint[] {
  const prototype = controller.prototype as Record<string, unknown>;
  return Object.getOwnPropertyNames(prototype)
    .filter((name) => {
      const handler = prototype[name];
      return typeof handler === 'function' && Reflect.hasMetadata(API_ENDPOINT, handler);
    })
    .map((name) => {
      const handler = prototype[name] as object;
      const policy = Reflect.getMetadata(AUTH_POLICY, handler) as AuthPolicy | undefined;
      const meta = Reflect.getMetadata(API_ENDPOINT, handler) as ApiEndpointMeta;
      return {
        controller,
        name,
        ability: policy?.kind === 'bearer' ? policy.ability : undefined,
        protocol: meta.protocol,
      };
    });
}

/**
 * Every controller of the app with an API endpoint, whichever module it is in: the API's own
 * and a deployment's (docs/extending.md). Each endpoint's ability must be one the catalog
 * offers, or the app does not start: a route no token could ever be given would be dead.
 */
export function apiControllers(
  discovery: DiscoveryService,
  catalog: AbilityCatalog,
): ApiControllers {
  const controllers: ApiControllers = { conventional: [], protocol: [] };
  for (const wrapper of discovery.getControllers()) {
    const controller = wrapper.metatype as Type | null;
    if (!controller) continue;
    const endpoints = endpointsOf(controller);
    if (endpoints.length === 0) continue;
    for (const { name, ability } of endpoints) {
      if (ability !== undefined && !catalog.has(ability)) {
        throw new Error(
          `${controller.name}.${name} needs the ability "${ability}", which is not in the catalog: add it to ABILITIES_FILE`,
        );
      }
    }
    // The middleware is mounted per controller: one reads forms, the other does not.
    const protocols = new Set(endpoints.map((endpoint) => endpoint.protocol));
    if (protocols.size > 1) {
      throw new Error(
        `${controller.name} mixes an endpoint following a standard's protocol with others: give it a controller of its own`,
      );
    }
    controllers[protocols.has(undefined) ? 'conventional' : 'protocol'].push(controller);
  }
  return controllers;
}
