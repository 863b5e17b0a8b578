import { expect } from '@jest/globals';
import { User } from '../../src/users/user.entity.js';
import { uniqueEmail } from '../factories/index.js';
import { TestSmtpServer } from './smtp-server.js';
import type { TestApp } from './test-app.js';
import type { SoftAuthenticator } from './webauthn.js';
import { WebClient } from './web-client.js';

/**
 * An account someone signed up for with another person's address (`tag` names it), signed in
 * in their browser, its address unconfirmed: what its owner takes back with a password reset.
 */
export async function registeredByAnother(t: TestApp, tag: string) {
  const email = uniqueEmail(tag);
  const intruder = new WebClient(t.server, t.mail);
  await intruder.register('Mallory', email, 'the intruder chose this', { confirm: false });
  const { id: userId } = await t.dataSource.getRepository(User).findOneByOrFail({ email });
  return { email, userId, intruder };
}

/** The address's owner asks for a reset link from a browser of their own: it, and the link. */
export async function resetLinkFor(t: TestApp, email: string) {
  const owner = new WebClient(t.server, t.mail);
  await owner.submit('/forgot-password', '/forgot-password', { email });
  const mail = await t.mail.waitFor({ to: email, subject: 'Reset your Tessera password' });
  return { owner, link: TestSmtpServer.linkPath(mail, '/reset-password/') };
}

/** Adds a passkey held by `authenticator` to the account signed in on `client`, from Security. */
export async function addPasskeyFrom(
  t: TestApp,
  client: WebClient,
  authenticator: SoftAuthenticator,
  name = 'Laptop',
) {
  const csrf = await client.csrfFrom('/settings/security');
  const options = await client.post('/settings/passkeys/options', csrf);
  expect(options.status).toBe(200);
  const credential = authenticator.register(options.body, new URL(t.config.app.publicUrl).origin);
  return client.post('/settings/passkeys', csrf, { name, credential: JSON.stringify(credential) });
}
