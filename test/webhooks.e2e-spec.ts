import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { setImmediate as nextTurn } from 'node:timers/promises';
import request from 'supertest';
import { AuditLog } from '../src/audit/audit-log.js';
import { ManualClock } from '../src/clock/clock.js';
import { Actors } from '../src/common/actor.js';
import { Transactions } from '../src/database/transactions.js';
import { Scheduler } from '../src/scheduler/scheduler.js';
import { ServiceAccountsService } from '../src/service-accounts/service-accounts.service.js';
import type { Team } from '../src/teams/team.entity.js';
import { WebhookDelivery } from '../src/webhooks/webhook-delivery.entity.js';
import { BACKOFF_MARGIN_MS } from '../src/webhooks/webhook-sender.js';
import { WebhookEndpoint } from '../src/webhooks/webhook-endpoint.entity.js';
import { WebhooksService } from '../src/webhooks/webhooks.service.js';
import { MAX_ATTEMPTS } from '../src/webhooks/retry-schedule.js';
import { WEBHOOK_EVENT_TYPES } from '../src/webhooks/webhook-events.js';
import { createTeam, createUser } from './factories/index.js';
import { ClusterClock } from './support/cluster-clock.js';
import { startInstances, type Instances } from './support/instances.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { waitFor } from './support/wait-for.js';
import { attempted } from './support/webhook-deliveries.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

const operator = Actors.operator();
// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020;

describe('webhooks: delivery', () => {
  const clock = new ClusterClock(2, Date.parse('2026-11-20T09:00:00Z'));
  let deployment: Instances;
  let receiver: WebhookReceiver;
  let team: Team;
  let n = 0;

  beforeAll(async () => {
    deployment = await startInstances(
      2,
      {
        WEBHOOK_ALLOWED_RANGES: '127.0.0.0/8',
        // A black-holed receiver is given up on within seconds (machine time: the socket's
        // wait), long enough that the receiver's answers are never late on a busy machine.
        WEBHOOK_TIMEOUT_MS: '2000',
        SERVICE_ACCOUNTS_PER_TEAM: '1000',
        RATE_LIMIT_ENABLED: 'false',
      },
      { clocks: clock.clocks },
    );
    receiver = await new WebhookReceiver(clock.first).start();
    const owner = await createUser(deployment.first.app, { name: 'Hook Owner' });
    team = await createTeam(deployment.first.app, owner, 'Hooked');
  });
  afterAll(async () => {
    await deployment.close();
    await receiver.stop();
  });

  const rows = () => deployment.first.dataSource.getRepository(WebhookDelivery);
  /** One team event (a service account made), on the i-th instance. */
  const change = (i = n) =>
    deployment.apps[i % 2].app
      .get(ServiceAccountsService)
      .create(operator, team.id, { name: `bot-${++n}` });
  const register = async (url: string, events = ['service_account.created']) => {
    const created = await deployment.first.app
      .get(WebhooksService)
      .create(operator, team.id, { url, events });
    receiver.secrets.push(created.secret);
    return created;
  };
  /** The endpoint's `count` deliveries once `done` holds of them. */
  const rowsOnce = async (
    endpointId: number,
    count: number,
    done: (rows: WebhookDelivery[]) => boolean,
    what: string,
  ) => {
    let seen: WebhookDelivery[] = [];
    return waitFor(
      async () => {
        seen = await rows().find({ where: { endpointId }, order: { id: 'ASC' } });
        const met = seen.length === count && done(seen);
        // A sender that finished its round just after the clock moved looks again a second
        // later on its clock: time moves on for it, as it would on its own.
        const due = seen.some(
          (d) =>
            d.status === 'pending' &&
            d.claimedBy === null &&
            d.nextAttemptAt.getTime() <= clock.nowMs(),
        );
        if (!met && due) await clock.advance(1_000);
        return met && seen;
      },
      {
        message: () =>
          `waiting for ${count} deliveries ${what} at ${clock.now().toISOString()}: ${JSON.stringify(
            seen.map((d) => [d.status, d.attempts, d.claimedBy, d.nextAttemptAt, d.lastError]),
          )}`,
      },
    );
  };
  /** The endpoint's `count` deliveries once each has been tried `attempts` times and is let go. */
  const settled = (endpointId: number, count: number, attempts = 1) =>
    rowsOnce(
      endpointId,
      count,
      (seen) => seen.every((d) => d.claimedBy === null && d.attempts === attempts),
      `tried ${attempts} times`,
    );
  /**
   * The failing endpoint's `count` deliveries once it backs off after failing `attempts` times:
   * every one pending, let go and waiting for the retry; the others untried.
   */
  const backingOff = (endpointId: number, count: number, attempts: number) =>
    rowsOnce(
      endpointId,
      count,
      (seen) =>
        seen.every(
          (d) =>
            d.status === 'pending' &&
            d.claimedBy === null &&
            d.nextAttemptAt.getTime() > clock.nowMs(),
        ) && seen.some((d) => d.attempts === attempts),
      `backing off after ${attempts} failed attempts`,
    );

  it('should deliver each event, signed in the Standard Webhooks format, with the id it keeps', async () => {
    const { endpoint, secret } = await register(receiver.url);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const stored = await deployment.first.dataSource
      .getRepository(WebhookEndpoint)
      .findOneByOrFail({ id: endpoint.id });
    expect(stored.secret).not.toContain(secret.slice(6, 20));

    const account = await change(0);
    const delivered = await waitFor(() =>
      receiver.received.find(
        (r) =>
          (r.payload.data as { service_account_id?: number }).service_account_id === account.id,
      ),
    );
    expect(delivered.payload).toEqual({
      type: 'service_account.created',
      timestamp: clock.now().toISOString(),
      data: expect.objectContaining({
        team_id: team.id,
        service_account_id: account.id,
        service_account: account.name,
        team: 'Hooked',
        actor: { kind: 'operator' },
      }),
    });
    // The payload matches the event's schema in the API document's `webhooks` section.
    const document = (await request(deployment.servers[0]).get('/api/v1/openapi.json')).body as {
      webhooks: Record<
        string,
        { post: { requestBody: { content: Record<string, { schema: object }> } } }
      >;
    };
    expect(Object.keys(document.webhooks).sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
    const schema =
      document.webhooks['service_account.created'].post.requestBody.content['application/json']
        .schema;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const valid = ajv.compile(schema);
    expect({ valid: valid(delivered.payload), errors: valid.errors ?? null }).toEqual({
      valid: true,
      errors: null,
    });
    expect(delivered.headers['webhook-id']).toMatch(/^msg_/);
    expect(delivered.headers['webhook-timestamp']).toBe(String(Math.floor(clock.nowMs() / 1000)));
    const [row] = await settled(endpoint.id, 1);
    expect(row).toMatchObject({
      status: 'delivered',
      attempts: 1,
      responseCode: 200,
      messageId: delivered.id,
      responseExcerpt: 'ok',
    });
    expect(receiver.rejected).toEqual([]);
    await deployment.first.app.get(WebhooksService).delete(operator, team.id, endpoint.id);
  });

  it('should send nothing for a change that rolled back', async () => {
    const { endpoint } = await register(receiver.url, ['team.policy_changed']);
    await expect(
      deployment.first.app.get(Transactions).run(async (m) => {
        deployment.first.app.get(AuditLog).recordIn(m, operator, {
          event: 'team.policy_changed',
          teamId: team.id,
          target: { type: 'team', id: team.id },
          detail: { team: team.name },
        });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect(await rows().countBy({ endpointId: endpoint.id })).toBe(0);
    await deployment.first.app.get(WebhooksService).delete(operator, team.id, endpoint.id);
  });

  it('should deliver every event, each id once, to a receiver that was refusing and then black-holed', async () => {
    const proxy = await new TcpProxy('127.0.0.1', receiver.port).start();
    try {
      const { endpoint } = await register(`http://127.0.0.1:${proxy.port}/hook`);
      await proxy.cut();
      for (let i = 0; i < 6; i++) await change(i);
      // Refused: the endpoint backs off, and the deliveries not tried yet wait for its retry.
      let list = await backingOff(endpoint.id, 6, 1);
      const tried = list.filter((d) => d.attempts > 0);
      expect(tried.map((d) => d.lastError)).toEqual(
        tried.map(() => expect.stringMatching(/ECONNREFUSED/)),
      );
      // How many were tried before a back-off was seen depends on the two instances' timing;
      // what the test holds to is that none is tried again before its retry (backingOff).
      expect(tried.length).toBeGreaterThanOrEqual(1);

      // Listening again, but forwarding nothing: the retry waits for an answer that never comes.
      await proxy.restore();
      proxy.fail('black-hole');
      await clock.advance(6_000);
      list = await backingOff(endpoint.id, 6, 2);
      expect(list.find((d) => d.attempts === 2)!.lastError).toBe('no answer in time');

      proxy.heal();
      await clock.advance(6 * 60_000);
      list = await rowsOnce(
        endpoint.id,
        6,
        (seen) => seen.every((d) => d.status === 'delivered'),
        'delivered',
      );
      const ids = list.map((d) => d.messageId);
      expect(new Set(ids).size).toBe(6);
      const counts = receiver.countsById();
      expect(ids.map((id) => counts.get(id))).toEqual([1, 1, 1, 1, 1, 1]);
      await deployment.first.app.get(WebhooksService).delete(operator, team.id, endpoint.id);
    } finally {
      await proxy.stop();
    }
  });

  it('should retry a failing endpoint for more than 24 hours, then dead-letter, and send a replay with the same id', async () => {
    const { endpoint } = await register(receiver.url);
    receiver.answer = { status: 500 };
    try {
      const started = clock.nowMs();
      await change(0);
      let [row] = await settled(endpoint.id, 1, 1);
      for (let attempt = 2; attempt <= MAX_ATTEMPTS; attempt++) {
        expect(row.status).toBe('pending');
        await clock.advance(row.nextAttemptAt.getTime() - clock.nowMs());
        [row] = await settled(endpoint.id, 1, attempt);
      }
      expect(row).toMatchObject({ status: 'dead', responseCode: 500, lastError: 'answered 500' });
      expect(clock.nowMs() - started).toBeGreaterThan(24 * 3_600_000);
      const tries = receiver.countsById().get(row.messageId);
      expect(tries).toBe(MAX_ATTEMPTS);

      receiver.answer = { status: 200 };
      await deployment.apps[1].app
        .get(WebhooksService)
        .replay(operator, team.id, endpoint.id, row.id);
      await waitFor(
        async () => (await rows().findOneByOrFail({ id: row.id })).status === 'delivered',
      );
      expect(receiver.countsById().get(row.messageId)).toBe(MAX_ATTEMPTS + 1);
      // Replayed once: a second replay finds nothing dead.
      await expect(
        deployment.first.app.get(WebhooksService).replay(operator, team.id, endpoint.id, row.id),
      ).rejects.toMatchObject({ code: 'not_found' });
    } finally {
      receiver.answer = { status: 200 };
      await deployment.first.app.get(WebhooksService).delete(operator, team.id, endpoint.id);
    }
  });

  it('should send 200 events for a burst of 200 changes on two instances, each once', async () => {
    const { endpoint } = await register(receiver.url);
    const before = receiver.received.length;
    // All 200 under way at once, each begun in a turn of its own, as requests arrive (see
    // ClusterClock on two SQLite instances in one process).
    const changes: Promise<unknown>[] = [];
    for (let i = 0; i < 200; i++) {
      changes.push(change(i));
      await nextTurn();
    }
    await Promise.all(changes);
    let seen: WebhookDelivery[] = [];
    const list = await waitFor(
      async () => {
        seen = await rows().findBy({ endpointId: endpoint.id });
        return seen.length === 200 && seen.every((d) => d.status === 'delivered') && seen;
      },
      {
        timeoutMs: 120_000,
        message: () =>
          `${seen.length} deliveries: ${JSON.stringify(
            seen
              .filter((d) => d.status !== 'delivered')
              .map((d) => [d.status, d.attempts, d.claimedBy, d.lastError])
              .slice(0, 5),
          )}`,
      },
    );
    const counts = receiver.countsById();
    expect(list.map((d) => counts.get(d.messageId))).toEqual(Array(200).fill(1));
    expect(receiver.received.length - before).toBe(200);
  });
});

describe('webhooks: an endpoint that never answers', () => {
  let t: TestApp;
  let stuck: WebhookReceiver;
  let healthy: WebhookReceiver;
  let team: Team;

  beforeAll(async () => {
    // Each attempt may wait the longest WEBHOOK_TIMEOUT_MS allows, so no attempt to the held
    // receiver ends within the test: only the sender's own design lets anything else through.
    t = await createTestApp({
      WEBHOOK_ALLOWED_RANGES: '127.0.0.0/8',
      WEBHOOK_TIMEOUT_MS: '60000',
      RATE_LIMIT_ENABLED: 'false',
    });
    stuck = await new WebhookReceiver().start();
    healthy = await new WebhookReceiver().start();
    const owner = await createUser(t.app, { name: 'Hook Owner' });
    team = await createTeam(t.app, owner, 'Held Up');
  });
  afterAll(async () => {
    await t.close();
    await stuck.stop();
    await healthy.stop();
  });

  const register = async (receiver: WebhookReceiver) => {
    const { endpoint, secret } = await t.app
      .get(WebhooksService)
      .create(operator, team.id, { url: receiver.url, events: ['service_account.created'] });
    receiver.secrets.push(secret);
    return endpoint;
  };
  const testEvent = (endpoint: WebhookEndpoint) =>
    t.app.get(WebhooksService).sendTest(operator, team.id, endpoint.id);

  it("should deliver another endpoint's events while it holds the first of its 20, then its own in order", async () => {
    let release = (): void => undefined;
    stuck.holding = new Promise<void>((resolve) => (release = resolve));
    try {
      const held = await register(stuck);
      const waiting: string[] = [];
      for (let i = 0; i < 20; i++) waiting.push(await testEvent(held));
      await waitFor(() => stuck.hosts.length === 1, { message: 'the first was never sent' });

      const other = await register(healthy);
      const delivered = [];
      for (let i = 0; i < 3; i++)
        delivered.push(await attempted(t.dataSource, await testEvent(other)));
      expect(delivered.map((d) => d.status)).toEqual(['delivered', 'delivered', 'delivered']);
      // The held endpoint's others wait their turn: one at a time, and none sent meanwhile.
      expect(stuck.hosts).toHaveLength(1);
      const deliveries = t.dataSource.getRepository(WebhookDelivery);
      expect(await deliveries.countBy({ endpointId: held.id, attempts: 0 })).toBe(19);
    } finally {
      stuck.holding = null;
      release();
    }
    const held = (
      await t.dataSource.getRepository(WebhookEndpoint).findOneByOrFail({ url: stuck.url })
    ).id;
    await waitFor(
      async () =>
        (await t.dataSource
          .getRepository(WebhookDelivery)
          .countBy({ endpointId: held, status: 'delivered' })) === 20,
      { message: () => `${stuck.received.length} of 20 delivered` },
    );
    const sent = await t.dataSource
      .getRepository(WebhookDelivery)
      .find({ where: { endpointId: held }, order: { id: 'ASC' } });
    // Oldest first, each once.
    expect(stuck.received.map((r) => r.id)).toEqual(sent.map((d) => d.messageId));
  });
});

/**
 * An endpoint whose delivery just failed is tried again on that delivery's schedule, not once
 * more for each of its other deliveries: they, and new events, wait for the retry, and go in
 * order once it succeeds (or at once after a test event that succeeds).
 */
describe('webhooks: a failing endpoint backs off', () => {
  const clock = new ManualClock(Date.parse('2026-11-20T09:00:00Z'));
  let t: TestApp;
  let receiver: WebhookReceiver;
  let endpoint: WebhookEndpoint;
  let team: Team;

  beforeAll(async () => {
    t = await createTestApp(
      {
        WEBHOOK_ALLOWED_RANGES: '127.0.0.1/32',
        RATE_LIMIT_ENABLED: 'false',
        SERVICE_ACCOUNTS_PER_TEAM: '1000',
      },
      { clock },
    );
    receiver = await new WebhookReceiver(clock).start();
    const owner = await createUser(t.app, { name: 'Backoff Owner' });
    team = await createTeam(t.app, owner, 'Backing Off');
    const created = await t.app
      .get(WebhooksService)
      .create(operator, team.id, { url: receiver.url, events: ['service_account.created'] });
    receiver.secrets.push(created.secret);
    endpoint = created.endpoint;
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });

  const deliveries = () =>
    t.dataSource
      .getRepository(WebhookDelivery)
      .find({ where: { endpointId: endpoint.id }, order: { id: 'ASC' } });
  const event = async (name: string) => {
    await t.app.get(ServiceAccountsService).create(operator, team.id, { name });
    await t.app.get(AuditLog).flush();
  };
  const allDelivered = () => {
    let seen: WebhookDelivery[] = [];
    return waitFor(
      async () => {
        seen = await deliveries();
        const done = seen.every((d) => d.status === 'delivered');
        // A sender that finished its round just after the clock moved looks again a second
        // later on its clock: time moves on for it, as it would on its own.
        const due = seen.some(
          (d) =>
            d.status === 'pending' &&
            d.claimedBy === null &&
            d.nextAttemptAt.getTime() <= clock.nowMs(),
        );
        if (!done && due) clock.advance(1_000);
        return done;
      },
      { message: () => JSON.stringify(seen.map((d) => [d.status, d.attempts, d.nextAttemptAt])) },
    );
  };
  /** Five events queued behind a first whose attempt is held, then answered 500. */
  const failWithBacklog = async (prefix: string) => {
    let release = (): void => undefined;
    receiver.holding = new Promise<void>((resolve) => (release = resolve));
    receiver.answer = { status: 500 };
    const before = receiver.hosts.length;
    await event(`${prefix}-0`);
    await waitFor(() => receiver.hosts.length === before + 1, { message: 'no first attempt' });
    for (let i = 1; i <= 5; i++) await event(`${prefix}-${i}`);
    receiver.holding = null;
    release();
    const first = (await deliveries()).at(-6)!;
    return waitFor(async () => {
      const row = (await deliveries()).find((d) => d.id === first.id)!;
      return row.attempts === 1 && row.claimedBy === null && row.responseCode === 500 && row;
    });
  };

  it('should hold back its other deliveries and new ones past the retry, then send them in order, once each', async () => {
    const failed = await failWithBacklog('retry');
    const requests = receiver.hosts.length;
    const retryAt = failed.nextAttemptAt.getTime();
    expect(retryAt).toBeGreaterThan(clock.nowMs());
    // They wait until the retry has answered, however long it may take.
    const heldUntil = retryAt + t.config.webhooks.timeoutMs + BACKOFF_MARGIN_MS;
    const waiting = (await deliveries()).filter((d) => d.id !== failed.id);
    expect(waiting.map((d) => [d.attempts, d.nextAttemptAt.getTime()])).toEqual(
      Array(5).fill([0, heldUntil]),
    );
    // A new event waits for the retry too.
    await event('retry-6');
    expect((await deliveries()).at(-1)!.nextAttemptAt.getTime()).toBe(heldUntil);
    expect(
      (
        await t.dataSource.getRepository(WebhookEndpoint).findOneByOrFail({ id: endpoint.id })
      ).backoffUntil?.getTime(),
    ).toBe(heldUntil);
    await t.app.get(Scheduler).drain();
    expect(receiver.hosts).toHaveLength(requests);

    // The retry is sent; while it waits for its answer, nothing else of the endpoint is due, so
    // no other instance sends a newer event before it.
    let release = (): void => undefined;
    receiver.holding = new Promise<void>((resolve) => (release = resolve));
    receiver.answer = { status: 200 };
    clock.advance(retryAt - clock.nowMs());
    await waitFor(() => receiver.hosts.length === requests + 1, { message: 'no retry' });
    const dueMeanwhile = (await deliveries()).filter(
      (d) =>
        d.id !== failed.id && d.status === 'pending' && d.nextAttemptAt.getTime() <= clock.nowMs(),
    );
    expect(dueMeanwhile).toEqual([]);
    receiver.holding = null;
    release();
    await allDelivered();
    const sent = await deliveries();
    const delivered = receiver.received.filter((r) => r.type === 'service_account.created');
    // The failed attempt, then each of the seven once, oldest first.
    expect(delivered.map((r) => r.id)).toEqual([
      sent[0].messageId,
      ...sent.map((d) => d.messageId),
    ]);
    expect(
      (await t.dataSource.getRepository(WebhookEndpoint).findOneByOrFail({ id: endpoint.id }))
        .backoffUntil,
    ).toBeNull();
  });

  it('should send what it held back at once when a test event succeeds', async () => {
    const failed = await failWithBacklog('test');
    expect(failed.nextAttemptAt.getTime()).toBeGreaterThan(clock.nowMs());
    receiver.answer = { status: 200 };
    const test = await attempted(
      t.dataSource,
      await t.app.get(WebhooksService).sendTest(operator, team.id, endpoint.id),
    );
    expect(test.status).toBe('delivered');
    await allDelivered();
  });

  const backoffUntil = async () =>
    (await t.dataSource.getRepository(WebhookEndpoint).findOneByOrFail({ id: endpoint.id }))
      .backoffUntil;
  const testEvent = async () =>
    attempted(
      t.dataSource,
      await t.app.get(WebhooksService).sendTest(operator, team.id, endpoint.id),
    );

  it('should let a failing test event move nothing, and send what was held in order once one gets through', async () => {
    await failWithBacklog('probe');
    const until = await backoffUntil();
    const held = (await deliveries()).filter((d) => d.status === 'pending');
    // A test event that fails too (Send test event, to see whether it works yet).
    const failedTest = await testEvent();
    expect([failedTest.status, failedTest.responseCode]).toEqual(['pending', 500]);
    expect(await backoffUntil()).toEqual(until);
    const after = await deliveries();
    for (const row of held) {
      expect(after.find((d) => d.id === row.id)!.nextAttemptAt).toEqual(row.nextAttemptAt);
    }
    receiver.answer = { status: 200 };
    const first = receiver.received.length;
    expect((await testEvent()).status).toBe('delivered');
    await waitFor(
      async () =>
        (await deliveries())
          .filter((d) => d.eventType !== 'webhook.test')
          .every((d) => d.status === 'delivered'),
      { message: 'what was held was not sent' },
    );
    expect(await backoffUntil()).toBeNull();
    // The held events went out oldest first, after the test event that got through.
    const sentNow = receiver.received
      .slice(first)
      .filter((r) => r.type === 'service_account.created');
    expect(sentNow.map((r) => r.id)).toEqual(held.map((d) => d.messageId));
    // The test event that failed is tried again on its own schedule.
    clock.advance(failedTest.nextAttemptAt.getTime() - clock.nowMs());
    await allDelivered();
  });

  it('should retry on its own a delivery the endpoint refuses for itself (a 4xx), and send the others meanwhile', async () => {
    receiver.answer = { status: 200 };
    receiver.nextAnswers.push({ status: 400 });
    const before = (await deliveries()).length;
    await event('refused-0');
    const [refused] = (await deliveries()).slice(before);
    await waitFor(async () => {
      const row = (await deliveries()).find((d) => d.id === refused.id)!;
      return row.attempts === 1 && row.claimedBy === null;
    });
    await event('refused-1');
    await event('refused-2');
    await waitFor(
      async () => (await deliveries()).slice(before + 1).every((d) => d.status === 'delivered'),
      { message: 'the others were held back' },
    );
    const row = (await deliveries()).find((d) => d.id === refused.id)!;
    expect([row.status, row.responseCode]).toEqual(['pending', 400]);
    expect(await backoffUntil()).toBeNull();
    // Its own retry, when it comes, gets through.
    clock.advance(row.nextAttemptAt.getTime() - clock.nowMs());
    await allDelivered();
  });
});
