import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Passkey } from '../src/passkeys/passkey.entity.js';
import { UsersRepository } from '../src/users/users.repository.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { SoftAuthenticator } from './support/webauthn.js';
import { addPasskeyFrom, registeredByAnother, resetLinkFor } from './support/held-accounts.js';

/**
 * A password reset removes every passkey of the account, also one added after the reset's
 * transaction began reading: its removal reads the passkeys as committed, not as its snapshot
 * has them. The test adds the passkey between the reset's first read and its write, so the
 * order is certain. Runs only with TEST_DATABASE_URL (see jest.config.js): SQLite runs one write
 * transaction at a time, so nothing commits inside another's there.
 */
describe("a password reset and a passkey committed inside the reset's transaction", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_ENABLED: 'false', EMAIL_VERIFICATION: 'off' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('should remove the passkey too, and say so', async () => {
    const { email, userId, intruder } = await registeredByAnother(t, 'snapshot');
    const { owner, link } = await resetLinkFor(t, email);

    // The reset has read the account in its transaction; the passkey commits before it writes.
    const users = t.app.get(UsersRepository);
    const setPasswordHash = users.setPasswordHash.bind(users);
    let added: number | undefined;
    jest.spyOn(users, 'setPasswordHash').mockImplementation(async (...args) => {
      if (added === undefined)
        added = (await addPasskeyFrom(t, intruder, SoftAuthenticator.create(), 'Planted')).status;
      return setPasswordHash(...args);
    });
    const fresh = 'the owner took it back';
    let done;
    try {
      done = await owner.submit(link, link, { password: fresh, password_confirmation: fresh });
    } finally {
      jest.restoreAllMocks();
    }
    expect(added).toBe(303);
    expect(done.headers.location).toBe('/login');
    expect(await t.dataSource.getRepository(Passkey).countBy({ userId })).toBe(0);
    const notice = await t.mail.waitFor({
      to: email,
      subject: 'Your Tessera password was changed',
    });
    expect(notice.text).toContain('Its passkey was removed too');
  });
});
