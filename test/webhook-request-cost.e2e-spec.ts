import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { Actors } from '../src/common/actor.js';
import { Scheduler } from '../src/scheduler/scheduler.js';
import type { User } from '../src/users/user.entity.js';
import { WebhooksService } from '../src/webhooks/webhooks.service.js';
import { addMember, createTeam, createToken, createUser } from './factories/index.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { waitFor } from './support/wait-for.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

/**
 * What telling a team's webhooks about a change costs the request that makes it: the same
 * statements as for a team with no endpoint, and one INSERT of the deliveries, in the change's
 * own transaction; the deliveries are sent after the answer. `npm run bench -- --events`
 * measures the time (docs/PERFORMANCE.md).
 */
describe('webhooks: the cost of an event to its request', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    t = await createTestApp({
      WEBHOOK_ALLOWED_RANGES: '127.0.0.1/32',
      RATE_LIMIT_API_PER_TOKEN: '100000',
    });
    receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });

  /** A team, its owner's token that may change roles, and a member whose role it changes. */
  async function team(name: string) {
    const owner = await createUser(t.app, { name: `${name} Owner` });
    const created = await createTeam(t.app, owner, name);
    const member: User = await createUser(t.app, { name: `${name} Member` });
    await addMember(t.app, created.id, member, 'member');
    const token = await createToken(t.app, owner, {
      name: 'automation',
      abilities: ['members:write'],
      teamId: created.id,
    });
    return { id: created.id, member, token: token.plaintext };
  }

  /** The statements the request itself sends (not the work it leaves for afterwards). */
  async function statementsOf(acme: Awaited<ReturnType<typeof team>>, role: string) {
    await t.app.get(Scheduler).drain();
    t.queries.clear();
    const res = await request(t.server)
      .patch(`/api/v1/team/members/${acme.member.id}`)
      .set('Authorization', `Bearer ${acme.token}`)
      .send({ role });
    expect(res.status).toBe(200);
    const sent = t.queries.requestQueries();
    await t.app.get(Scheduler).drain();
    return sent;
  }

  /** A statement's verb and table, what stays the same whatever the values. */
  const shapeOf = (sql: string): string =>
    /^\s*(\w+)(?:.*?\b(?:FROM|INTO|UPDATE)\s+[`"]?(\w+))?/is
      .exec(sql)!
      .slice(1)
      .filter(Boolean)
      .join(' ')
      .toUpperCase();

  it('should cost a change one INSERT of its deliveries in its own transaction, and send them after the answer', async () => {
    const quiet = await team('Quiet');
    const watched = await team('Watched');
    const hooks = t.app.get(WebhooksService);
    for (const path of ['a', 'b', 'c']) {
      const created = await hooks.create(Actors.operator(), watched.id, {
        url: `${receiver.url}/${path}`,
        events: ['member.role_changed'],
      });
      receiver.secrets.push(created.secret);
    }
    // Warm: each request's statements prepared once.
    await statementsOf(quiet, 'admin');
    await statementsOf(watched, 'admin');

    const without = (await statementsOf(quiet, 'member')).map(shapeOf);
    const withHooks = (await statementsOf(watched, 'member')).map(shapeOf);
    const added = withHooks.findIndex((s) => s === 'INSERT WEBHOOK_DELIVERIES');
    expect(added).toBeGreaterThan(withHooks.findIndex((s) => /^(BEGIN|START)/.test(s)));
    expect(added).toBeLessThan(withHooks.findIndex((s) => s === 'COMMIT'));
    expect(withHooks.toSpliced(added, 1)).toEqual(without);

    // Delivered afterwards, to each of the three endpoints, as one event.
    const got = await waitFor(() => {
      const changes = receiver.received.filter((r) => r.type === 'member.role_changed');
      return changes.length === 6 && changes;
    });
    expect(new Set(got.map((r) => r.id)).size).toBe(2);
    expect(receiver.rejected).toEqual([]);
  });
});
