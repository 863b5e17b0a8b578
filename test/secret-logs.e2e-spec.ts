import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { uniqueEmail } from './factories/index.js';
import { sessionIdOf } from './support/html.js';
import { LogCapture } from './support/log-capture.js';
import { createTestApp, type TestApp } from './support/test-app.js';
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

  it('should log neither tokens, nor passwords, nor session cookies, nor CSRF tokens', async () => {
    const password = 'hunter2-correct-horse';
    const client = new WebClient(t.server);
    const email = uniqueEmail('logs');
    const registered = await client.register('Log Reader', email, password);
    const cookie = client.sessionCookie(registered)!;
    await client.submit('/dashboard', '/logout');
    await client.login(email, 'a wrong password, also secret');
    const signedIn = await client.login(email, password);
    const csrf = await client.csrfFrom('/settings/api-tokens');
    const created = await client.submit('/settings/api-tokens', '/settings/api-tokens', {
      name: 'logged?',
      abilities: 'user:read',
    });
    const plaintext = /value="(tsr_[0-9A-Za-z]{36})"/.exec(created.text)![1];

    await request(t.server).get('/api/v1/user/profile').set('Authorization', `Bearer ${plaintext}`);
    await request(t.server).get('/api/v1/team').set('Authorization', `Bearer ${plaintext}`);
    await request(t.server).get(`/api/v1/user/profile?access_token=${plaintext}`);
    await request(t.server)
      .get('/api/v1/user/profile')
      .set('Authorization', `Bearer ${plaintext.slice(0, -1)}x`);
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
    const refused = await new WebClient(t.server).submit('/register', '/register', {
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
  }, 30_000);
});
