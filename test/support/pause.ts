import { jest } from '@jest/globals';
import { ProfileService } from '../../src/account/profile.service.js';
import type { SignedInPerson } from './people.js';
import type { TestApp } from './test-app.js';

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

/**
 * A rename of `person` sent now through `app`, that reads the session and then waits in the
 * service until `finish`: it writes the session back (with its message) after whatever the
 * test does meanwhile.
 */
export async function renameHeld(app: Pick<TestApp, 'app'>, person: SignedInPerson) {
  const { reached, release } = pauseNextCall(app.app.get(ProfileService), 'update');
  const csrf = await person.client.csrfFrom('/settings/profile');
  // Sent now (a request starts when it is awaited).
  const answer = person.client
    .post('/settings/profile', csrf, { name: 'Renamed Meanwhile', email: person.email })
    .then((res) => res);
  await Promise.race([reached, answer]);
  return {
    /** Lets the rename go on (at once if it never reached the service), and its answer. */
    finish: () => {
      release();
      return answer;
    },
  };
}
