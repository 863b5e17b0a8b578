import { afterEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { User } from '../src/users/user.entity.js';
import { createToken, createUser, uniqueEmail } from './factories/index.js';
import { LogCapture } from './support/log-capture.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { WebClient } from './support/web-client.js';

/** What a person sees when something fails that is nobody's input: here, a table gone missing. */
describe('unexpected failures', () => {
  let t: TestApp;

  afterEach(async () => {
    await t.close();
  });

  it('should answer 500 internal_error in the envelope, revealing nothing internal', async () => {
    const logs = new LogCapture();
    t = await createTestApp({ LOG_LEVEL: 'log' }, { logs });
    const { plaintext } = await createToken(t.app, await createUser(t.app));
    await t.dataSource.query(
      'ALTER TABLE personal_access_tokens RENAME TO personal_access_tokens_gone',
    );

    const res = await request(t.server)
      .get('/api/v1/user/profile')
      .set('Authorization', `Bearer ${plaintext}`);

    expect(res.status).toBe(500);
    const requestId = res.headers['x-request-id'];
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body).toEqual({
      success: false,
      error: { code: 'internal_error', message: 'Something went wrong on our side.', requestId },
      version: 'v1',
      timestamp: expect.any(String),
    });
    expect(res.text).not.toMatch(/personal_access_tokens|SELECT|SQLITE|ER_|at \//);
    // Support finds the failure by the id the client was given: the cause and the request line.
    const cause = logs.entries.find((e) => e.reqId === requestId && e.context === 'Errors');
    expect(cause).toMatchObject({
      level: 'error',
      err: { stack: expect.stringMatching(/personal_access_tokens/) },
    });
    expect(logs.requestLines(requestId)).toEqual([
      expect.objectContaining({ level: 'error', status: 500, route: '/api/v1/user/profile' }),
    ]);
  });

  it('should create an account all or nothing: no user without its personal team', async () => {
    t = await createTestApp();
    const client = new WebClient(t.server, t.mail);
    await client.get('/register');
    await t.dataSource.query('DROP TABLE team_members');
    const email = uniqueEmail('atomic');

    const res = await client.submit('/register', '/register', {
      name: 'Half Written',
      email,
      password: 'a good password',
      password_confirmation: 'a good password',
    });

    expect(res.status).toBe(500);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.text).toContain('Something went wrong on our side.');
    expect(res.text).toContain(`mention request <code>${res.headers['x-request-id']}</code>`);
    expect(res.text).not.toMatch(/team_members|SQLITE|ER_/);
    expect(await t.dataSource.getRepository(User).countBy({ email })).toBe(0);
  });
});
