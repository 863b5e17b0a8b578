import { jest } from '@jest/globals';

/**
 * The next call of `object[method]` waits, once it has started (`reached`), until `release`:
 * what a request does meanwhile comes between its reading the session and its writing it.
 * Call `release` in a `finally` too: an app closes only once its requests have answered.
 */
export function pauseNextCall<T extends object>(object: T, method: keyof T & string) {
  const methods = object as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const original = methods[method].bind(object);
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const reached = new Promise<void>((resolve) => {
    jest.spyOn(methods, method).mockImplementationOnce(async (...args: unknown[]) => {
      resolve();
      await released;
      return original(...args);
    });
  });
  return { reached, release };
}
