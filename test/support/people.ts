import { createUser, uniqueEmail } from '../factories/index.js';
import type { User } from '../../src/users/user.entity.js';
import type { TestApp } from './test-app.js';
import { TestSmtpServer } from './smtp-server.js';
import { WebClient } from './web-client.js';

export const PASSWORD = 'correct horse battery';

export interface SignedInPerson {
  user: User;
  email: string;
  password: string;
  /** A browser-like client holding the person's session. */
  client: WebClient;
}

/** A person with an account (made directly, not through the pages) signed in through /login. */
export async function signedInPerson(
  t: Pick<TestApp, 'app' | 'server' | 'mail'>,
  overrides: { name?: string; email?: string } = {},
): Promise<SignedInPerson> {
  const email = overrides.email ?? uniqueEmail('person');
  const user = await createUser(t.app, { name: overrides.name, email, password: PASSWORD });
  const client = new WebClient(t.server, t.mail);
  const res = await client.login(email, PASSWORD);
  if (res.status !== 303 || res.headers.location !== '/dashboard') {
    throw new Error(`sign-in failed: ${res.status} ${res.headers.location}`);
  }
  return { user, email, password: PASSWORD, client };
}

/** Asks, from the profile page, to move the person to `newEmail`; returns the mailed link's path. */
export async function addressChangeLink(
  t: Pick<TestApp, 'mail'>,
  person: SignedInPerson,
  newEmail: string,
): Promise<string> {
  await person.client.submit('/settings/profile', '/settings/profile', {
    name: person.user.name,
    email: newEmail,
  });
  const mail = await t.mail.waitFor({ to: newEmail, subject: 'Confirm your new email address' });
  return TestSmtpServer.linkPath(mail, '/settings/profile/email/');
}
