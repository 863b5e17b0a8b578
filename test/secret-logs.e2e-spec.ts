import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ConsoleLogger } from '@nestjs/common';
import request from 'supertest';
import { uniqueEmail } from './factories/index.js';
import { sessionIdOf } from './support/html.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { WebClient } from './support/web-client.js';

/** Everything the app logs, at the most verbose level, as the text an operator would read. */
class CapturingLogger extends ConsoleLogger {
  readonly lines: string[] = [];
  constructor() {
    super('Tessera', {
      logLevels: ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'],
      json: true,
    });
  }
  protected override printMessages(messages: unknown[], context?: string, level?: string): void {
    for (const message of messages)
      this.lines.push(`${level} ${context} ${JSON.stringify(message)}`);
  }
  protected override printStackTrace(stack: string): void {
    this.lines.push(stack);
  }
}

describe('secrets in the logs', () => {
  let t: TestApp;
  const logger = new CapturingLogger();

  beforeAll(async () => {
    t = await createTestApp({ LOG_LEVEL: 'verbose' }, undefined, logger);
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
    await client.submit('/settings/api-tokens', '/settings/api-tokens', {
      name: 'logged?',
      abilities: 'user:read',
    });
    const plaintext = /value="(tsr_[0-9A-Za-z]{36})"/.exec(
      (await client.get('/settings/api-tokens')).text,
    )![1];

    await request(t.server).get('/api/v1/user/profile').set('Authorization', `Bearer ${plaintext}`);
    await request(t.server).get('/api/v1/team').set('Authorization', `Bearer ${plaintext}`);
    await request(t.server).get(`/api/v1/user/profile?access_token=${plaintext}`);
    await request(t.server)
      .get('/api/v1/user/profile')
      .set('Authorization', `Bearer ${plaintext.slice(0, -1)}x`);
    await request(t.server).get('/api/v1/nothing').set('Authorization', `Bearer ${plaintext}`);
    await t.dataSource.query('DROP TABLE team_members');
    await request(t.server).get('/api/v1/user/profile').set('Authorization', `Bearer ${plaintext}`);
    await client.submit('/teams', '/teams', { name: 'fails now' });

    const log = logger.lines.join('\n');
    expect(logger.lines.length).toBeGreaterThan(0);
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
