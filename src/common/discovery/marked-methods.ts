import type { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';

/**
 * Every method of the application's providers that a decorator marked with metadata `key`,
 * bound to its instance, with that metadata: how `@OnEvent` handlers and `@ComposesMail`
 * composers are found at start. A provider registered under a second name (`useExisting`) is
 * listed twice by Nest and counted once here.
 */
export function markedMethods<T>(
  key: string,
  tools: { discovery: DiscoveryService; scanner: MetadataScanner; reflector: Reflector },
): { meta: T; method: (...args: never[]) => unknown }[] {
  const seen = new Set<object>();
  const found: { meta: T; method: (...args: never[]) => unknown }[] = [];
  for (const wrapper of tools.discovery.getProviders()) {
    const instance = wrapper.instance as Record<string, unknown> | undefined;
    if (!instance || typeof instance !== 'object' || !wrapper.isDependencyTreeStatic()) continue;
    if (seen.has(instance)) continue;
    seen.add(instance);
    for (const name of tools.scanner.getAllMethodNames(Object.getPrototypeOf(instance))) {
      const target = instance[name];
      if (typeof target !== 'function') continue;
      const meta = tools.reflector.get<T | undefined>(key, target);
      if (meta !== undefined) {
        found.push({ meta, method: (target as (...args: never[]) => unknown).bind(instance) });
      }
    }
  }
  return found;
}
