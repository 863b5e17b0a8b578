import { createUser, uniqueEmail } from '../factories/index.js';
import { User } from '../../src/users/user.entity.js';
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

export interface PersonOptions {
  name?: string;
  email?: string;
  /**
   * Sign up through the pages, as a person would (the form, signing in, then confirming the
   * address from the link in its mail), instead of having the account made directly.
   */
  register?: boolean;
}

/**
 * A person with an account signed in through /login: the account made directly (not through
 * the pages) unless `register` asks to sign up through them.
 */
export async function signedInPerson(
  t: Pick<TestApp, 'app' | 'server' | 'mail' | 'dataSource'>,
  { name, email = uniqueEmail('person'), register = false }: PersonOptions = {},
): Promise<SignedInPerson> {
  const client = new WebClient(t.server, t.mail);
  if (register) {
    await client.register(name ?? 'Ada Lovelace', email, PASSWORD);
    const user = await t.dataSource.getRepository(User).findOneByOrFail({ email });
    return { user, email, password: PASSWORD, client };
  }
  const user = await createUser(t.app, { name, email, password: PASSWORD });
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
