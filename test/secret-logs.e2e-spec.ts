import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Secret, TOTP } from 'otpauth';
import request from 'supertest';
import { TwoFactorCredential } from '../src/two-factor/two-factor-credential.entity.js';
import { uniqueEmail } from './factories/index.js';
import { sessionIdOf } from './support/html.js';
import { LogCapture } from './support/log-capture.js';
import { TestSmtpServer } from './support/smtp-server.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { totpSecretIn } from './support/two-factor.js';
import { sleep } from './support/wait-for.js';
import { WebClient } from './support/web-client.js';

describe('secrets in the logs', () => {
  let t: TestApp;
  const logs = new LogCapture();

  beforeAll(async () => {
    t = await createTestApp({ LOG_LEVEL: 'verbose' }, { logs });
  });
  afterAll(async () => {
    await t.close();
  });

  // First: the test after this one breaks tables everybody needs.
  it('should log neither two-factor secrets nor codes, even when writing them fails', async () => {
    const client = new WebClient(t.server, t.mail);
    const email = uniqueEmail('otp-logs');
    await client.register('Code Keeper', email);
    const setup = await client.submit('/dashboard', '/settings/two-factor');
    const secret = totpSecretIn(setup.text)!;
    const code = TOTP.generate({ secret: Secret.fromBase32(secret) });
    await client.submit('/settings/two-factor', '/settings/two-factor/confirm', { code: '000001' });
    const enabled = await client.submit('/settings/two-factor', '/settings/two-factor/confirm', {
      code,
    });
    const recoveryCodes = [...enabled.text.matchAll(/<li><code>([^<]+)<\/code><\/li>/g)].map(
      (m) => m[1],
    );
    expect(recoveryCodes).toHaveLength(10);
    const sealed = (await t.dataSource.getRepository(TwoFactorCredential).findOneByOrFail({}))
      .secret;

    await client.submit('/dashboard', '/logout');
    await client.login(email);
    await client.submit('/two-factor-challenge', '/two-factor-challenge', { code });
    await client.submit('/two-factor-challenge', '/two-factor-challenge', {
      recovery_code: recoveryCodes[0],
    });
    // A failed write: the database error would carry the rows (the recovery codes' hashes).
    await t.dataSource.query(
      'ALTER TABLE two_factor_recovery_codes RENAME COLUMN code_hash TO digest',
    );
    const failed = await client.submit('/settings/security', '/settings/two-factor/recovery-codes');
    expect(failed.status).toBe(500);

    const log = logs.text;
    expect(log).toMatch(/QueryFailedError/);
    expect(log).not.toMatch(/[0-9a-f]{64}/);
    for (const value of [secret, sealed, sealed.slice(3, 40), code, ...recoveryCodes]) {
      expect(log).not.toContain(value);
    }
  });

  it('should log neither tokens, nor passwords, nor session cookies, nor CSRF tokens', async () => {
    const password = 'hunter2-correct-horse';
    const client = new WebClient(t.server, t.mail);
    const email = uniqueEmail('logs');
    const registered = await client.register('Log Reader', email, password);
    const cookie = client.sessionCookie(registered)!;
    await client.submit('/dashboard', '/logout');
    await client.login(email, 'a wrong password, also secret');
    const signedIn = await client.login(email, password);
    const csrf = await client.csrfFrom('/settings/api-tokens');
    const { value: plaintext } = await client.createTokenOnPage({
      name: 'logged?',
      abilities: 'user:read',
    });

    await request(t.server).get('/api/v1/user/profile').set('Authorization', `Bearer ${plaintext}`);
    await request(t.server).get('/api/v1/team').set('Authorization', `Bearer ${plaintext}`);
    await request(t.server).get(`/api/v1/user/profile?access_token=${plaintext}`);
    await request(t.server)
      .get('/api/v1/user/profile')
      .set(
        'Authorization',
        `Bearer ${plaintext.slice(0, -1)}${plaintext.endsWith('x') ? 'y' : 'x'}`,
      );
    await request(t.server).get('/api/v1/nothing').set('Authorization', `Bearer ${plaintext}`);
    await t.dataSource.query('DROP TABLE team_members');
    await request(t.server).get('/api/v1/user/profile').set('Authorization', `Bearer ${plaintext}`);
    // Every page's header lists the person's teams, so no page renders from here on: the forms
    // post the CSRF token of the page read before.
    await client.post('/teams', csrf, { name: 'fails now' });

    // Failed inserts: the database error carries the row (a token hash, a password hash).
    await t.dataSource.query('ALTER TABLE personal_access_tokens RENAME COLUMN name TO label');
    const failed = await client.post('/settings/api-tokens', csrf, {
      name: 'fails too',
      abilities: 'user:read',
    });
    expect(failed.status).toBe(500);
    await t.dataSource.query('ALTER TABLE users RENAME COLUMN name TO full_name');
    const refused = await new WebClient(t.server, t.mail).submit('/register', '/register', {
      name: 'Half Written',
      email: uniqueEmail('fails'),
      password,
      password_confirmation: password,
    });
    expect(refused.status).toBe(500);

    const log = logs.text;
    expect(log).toMatch(/QueryFailedError/);
    expect(log).not.toMatch(/\$argon2id\$/);
    expect(log).not.toMatch(/[0-9a-f]{64}/);
    // Every request was logged, the failures with their causes.
    expect(logs.entries.filter((e) => 'status' in e).length).toBeGreaterThanOrEqual(14);
    expect(logs.entries.some((e) => e.context === 'Errors' && e.err)).toBe(true);
    for (const secret of [
      plaintext,
      plaintext.slice(4, 34),
      password,
      'a wrong password, also secret',
      sessionIdOf(cookie),
      sessionIdOf(client.sessionCookie(signedIn)!),
      csrf,
    ]) {
      expect(log).not.toContain(secret);
    }
  });

  it('should log neither the links mailed to people, nor the new password, nor the mail server password', async () => {
    const smtp = await TestSmtpServer.start({
      auth: { user: 'tessera', pass: 'smtp-pa55word-secret' },
    });
    const mailLogs = new LogCapture();
    const app = await createTestApp({ LOG_LEVEL: 'verbose' }, { logs: mailLogs, mail: smtp });
    try {
      const email = uniqueEmail('mail-logs');
      const newPassword = 'a new and secret password';
      const client = new WebClient(app.server, smtp);
      await client.register('Mail Logger', email, 'the first password');
      const confirmation = smtp.find({ to: email })[0];
      await client.submit('/forgot-password', '/forgot-password', { email });
      const reset = await smtp.waitFor({ to: email, subject: 'Reset your Tessera password' });
      const link = TestSmtpServer.linkPath(reset, '/reset-password/');
      await client.get(link);
      await client.submit(link, link, {
        password: newPassword,
        password_confirmation: newPassword,
      });
      await smtp.waitFor({ to: email, subject: 'Your Tessera password was changed' });
      // A failing send logs its error: the server's password is not in it either.
      await smtp.stop();
      await client.submit('/forgot-password', '/forgot-password', { email });
      await sleep(300);

      const log = mailLogs.text;
      expect(log).toMatch(/Could not send password-reset message/);
      for (const secret of [
        TestSmtpServer.linkPath(confirmation, '/verify-email/').split('/').at(-1)!,
        link.split('/').at(-1)!,
        newPassword,
        'the first password',
        'smtp-pa55word-secret',
      ]) {
        expect(log).not.toContain(secret);
      }
    } finally {
      await app.close();
      await smtp.stop();
    }
  });
});
