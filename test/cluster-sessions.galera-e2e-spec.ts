import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Session } from '../src/auth/session.entity.js';
import { burst, tally } from './support/burst.js';
import { createClusterDatabase, type ClusterDatabase } from './support/galera.js';
import { SHARED_SECRET } from './support/instances.js';
import { renameHeld } from './support/pause.js';
import { PASSWORD, signedInPerson } from './support/people.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { recoveryCodesOf, totpCodeAt, totpSecretIn } from './support/two-factor.js';
import type { WebClient } from './support/web-client.js';

const NEW_PASSWORD = 'a brand new password';

/**
 * One browser's session used through two nodes at once: each node's app writes the same
 * session row, a write that read an older version merges what it changed into the newer row
 * (under its lock), and a write the cluster refuses at commit is run again. Nothing one request
 * stored is lost to another's, whichever node each went through. Runs only with
 * TEST_GALERA_URLS (see jest.config.js).
 */
describe('one session on two cluster nodes', () => {
  let db: ClusterDatabase;
  let apps: TestApp[];

  beforeAll(async () => {
    db = await createClusterDatabase();
    const env = { SESSION_SECRET: SHARED_SECRET, RATE_LIMIT_ENABLED: 'false' };
    apps = [
      await createTestApp(env, { database: db.onNode[0] }),
      await createTestApp(env, { database: db.onNode[1] }),
    ];
  });
  afterAll(async () => {
    for (const app of apps ?? []) await app.close();
    await db?.drop();
  });

  const signedIn = async (client: WebClient) => (await client.get('/dashboard')).status === 200;

  it('should keep a two-factor setup begun through one node while a form of the session, held on the other, had read it before', async () => {
    const person = await signedInPerson(apps[0]);
    const onSecond = person.client.on(apps[1].server);
    const rename = await renameHeld(apps[0], person);
    let secret: string | undefined;
    try {
      secret = totpSecretIn(
        (await onSecond.submit('/settings/security', '/settings/two-factor')).text,
      );
      expect((await rename.finish()).status).toBe(303);
    } finally {
      await rename.finish();
      jest.restoreAllMocks();
    }
    // The secret shown through the second node turns two-factor on through the first.
    const done = await person.client.submit(
      '/settings/two-factor',
      '/settings/two-factor/confirm',
      { code: totpCodeAt(apps[0], secret!) },
    );
    expect(recoveryCodesOf(done.text)).toHaveLength(10);
    expect(await onSecond.textOf('/settings/profile')).toContain('Renamed Meanwhile');
  });

  it('should keep the session signed in on both nodes through a password change on one while a form of the session, held on the other, had read it before', async () => {
    const person = await signedInPerson(apps[0]);
    const onSecond = person.client.on(apps[1].server);
    const rename = await renameHeld(apps[0], person);
    try {
      const res = await onSecond.submit('/settings/password', '/settings/password', {
        current_password: PASSWORD,
        password: NEW_PASSWORD,
        password_confirmation: NEW_PASSWORD,
      });
      expect(`${res.status} ${res.headers.location}`).toBe('303 /settings/security');
      expect((await rename.finish()).status).toBe(303);
    } finally {
      await rename.finish();
      jest.restoreAllMocks();
    }
    expect(await signedIn(person.client)).toBe(true);
    expect(await signedIn(onSecond)).toBe(true);
    expect(
      await apps[1].dataSource.getRepository(Session).countBy({ userId: person.user.id }),
    ).toBe(1);
  });

  it('should answer every request of a burst of one session spread over both nodes, losing none of what they stored', async () => {
    const person = await signedInPerson(apps[0]);
    const clients = [person.client, person.client.on(apps[1].server)];
    const csrf = await person.client.csrfFrom('/settings/profile');
    // A two-factor setup among 20 renames of the same session, sent at once through both nodes.
    const answers = await burst(21, [apps[0].server, apps[1].server], (i) =>
      i === 10
        ? clients[i % 2].post('/settings/two-factor', csrf)
        : clients[i % 2].post('/settings/profile', csrf, {
            name: `Renamed ${i}`,
            email: person.email,
          }),
    );
    expect(tally(answers, (res) => String(res.status))).toEqual({ '200': 1, '303': 20 });
    expect(await signedIn(clients[0])).toBe(true);
    expect(await signedIn(clients[1])).toBe(true);
    // The setup the burst began is still in the session: its page shows the same secret.
    const secret = totpSecretIn(answers[10].text);
    expect(secret).toBeDefined();
    expect(totpSecretIn((await clients[1].get('/settings/two-factor')).text)).toBe(secret);
    const done = await clients[0].submit('/settings/two-factor', '/settings/two-factor/confirm', {
      code: totpCodeAt(apps[0], secret!),
    });
    expect(recoveryCodesOf(done.text)).toHaveLength(10);
  });
});
