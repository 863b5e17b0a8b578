import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { DiscoveryService, MetadataScanner, ModulesContainer, Reflector } from '@nestjs/core';
import { AUTH_POLICY } from '../src/common/auth/auth-policy.decorator.js';
import { createTestApp, type TestApp } from './support/test-app.js';

describe('auth policy of every route', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('should find an explicit auth decision on every registered route', () => {
    const reflector = new Reflector();
    const scanner = new MetadataScanner();
    const routes: string[] = [];
    const undecided: string[] = [];
    const discovery = new DiscoveryService(t.app.get(ModulesContainer));
    for (const wrapper of discovery.getControllers()) {
      const type = wrapper.metatype as (new (...args: never[]) => object) | null;
      if (!type) continue;
      for (const name of scanner.getAllMethodNames(type.prototype)) {
        const handler = (type.prototype as Record<string, () => unknown>)[name];
        if (Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
        const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as number];
        const route = `${method} ${type.name}.${name}`;
        routes.push(route);
        if (!reflector.getAllAndOverride(AUTH_POLICY, [handler, type])) undecided.push(route);
      }
    }
    expect(routes).toEqual(
      expect.arrayContaining(['GET UserController.profile', 'GET TeamController.current']),
    );
    expect(undecided).toEqual([]);
  });
});
