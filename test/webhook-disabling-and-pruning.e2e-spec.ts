import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AuditEvent } from '../src/audit/audit-event.entity.js';
import { AuditLog } from '../src/audit/audit-log.js';
import { ManualClock } from '../src/clock/clock.js';
import { Actors } from '../src/common/actor.js';
import { OutboxMessage } from '../src/mail/outbox-message.entity.js';
import type { Team } from '../src/teams/team.entity.js';
import type { User } from '../src/users/user.entity.js';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS } from '../src/webhooks/retry-schedule.js';
import { WebhookDelivery } from '../src/webhooks/webhook-delivery.entity.js';
import { WebhookSender } from '../src/webhooks/webhook-sender.js';
import { WebhookEndpoint } from '../src/webhooks/webhook-endpoint.entity.js';
import { WebhooksService } from '../src/webhooks/webhooks.service.js';
import { addMember, createTeam, createUser, uniqueEmail } from './factories/index.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { waitFor } from './support/wait-for.js';
import { attempted } from './support/webhook-deliveries.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

const operator = Actors.operator();
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * The two rules that run on their own, with time moved by the spec's clock (no row is edited):
 * an endpoint whose deliveries have all failed for 5 days is disabled, once, and the team's
 * owners are mailed; the delivery log keeps 30 days, pruned by the sender's periodic round.
 */
describe('webhooks: disabling a failing endpoint and pruning the delivery log', () => {
  const clock = new ManualClock(Date.parse('2026-11-20T09:00:00Z'));
  let t: TestApp;
  let healthy: WebhookReceiver;
  let failing: WebhookReceiver;
  let owner: User;
  let admin: User;
  let team: Team;
  let failingEndpoint: WebhookEndpoint;
  let healthyEndpoint: WebhookEndpoint;

  beforeAll(async () => {
    t = await createTestApp(
      { WEBHOOK_ALLOWED_RANGES: '127.0.0.1/32', RATE_LIMIT_ENABLED: 'false' },
      { clock },
    );
    healthy = await new WebhookReceiver(clock).start();
    failing = await new WebhookReceiver(clock).start();
    failing.answer = { status: 500 };
    owner = await createUser(t.app, { name: 'Owning Olga', email: uniqueEmail('owner') });
    admin = await createUser(t.app, { name: 'Admin Abe', email: uniqueEmail('admin') });
    team = await createTeam(t.app, owner, 'Failing Hooks');
    await addMember(t.app, team.id, admin, 'admin');
    for (const receiver of [healthy, failing]) {
      const created = await t.app
        .get(WebhooksService)
        .create(operator, team.id, { url: receiver.url, events: ['member.joined'] });
      receiver.secrets.push(created.secret);
      if (receiver === healthy) healthyEndpoint = created.endpoint;
      else failingEndpoint = created.endpoint;
    }
  });
  afterAll(async () => {
    await t.close();
    await healthy.stop();
    await failing.stop();
  });

  const deliveries = () => t.dataSource.getRepository(WebhookDelivery);
  const endpointRow = (id: number) =>
    t.dataSource.getRepository(WebhookEndpoint).findOneByOrFail({ id });
  /** A test event to the endpoint, once its first attempt has been made and let go. */
  const tested = async (endpoint: WebhookEndpoint) => {
    const messageId = await t.app
      .get(WebhooksService)
      .sendTest(operator, team.id, endpoint.id)
      .catch(() => null);
    if (messageId === null) return null;
    return attempted(t.dataSource, messageId, () => clock.now().toISOString());
  };

  it("should disable an endpoint whose deliveries all failed for 5 days, once, and mail the team's owners", async () => {
    const started = clock.nowMs();
    const first = await tested(failingEndpoint);
    expect(first).toMatchObject({ status: 'pending', responseCode: 500 });
    expect((await endpointRow(failingEndpoint.id)).failingSince?.getTime()).toBe(started);

    // A new event every 12 hours, each failing, and the retries of the earlier ones between.
    while (clock.nowMs() - started < 5 * DAY_MS - 12 * HOUR_MS) {
      clock.advance(12 * HOUR_MS);
      expect(await tested(failingEndpoint)).toMatchObject({ responseCode: 500 });
      expect(await tested(healthyEndpoint)).toMatchObject({ status: 'delivered' });
      expect((await endpointRow(failingEndpoint.id)).status).toBe('active');
    }
    clock.advance(12 * HOUR_MS);
    // Past the fifth day, the first of the endpoint's deliveries to fail (a retry due now, or
    // this event) disables it, and the rest are dead-lettered unsent.
    await t.app.get(WebhooksService).sendTest(operator, team.id, failingEndpoint.id);
    await waitFor(async () => (await endpointRow(failingEndpoint.id)).status === 'disabled', {
      message: () => `still active at ${clock.now().toISOString()}`,
    });

    const disabled = await endpointRow(failingEndpoint.id);
    expect(disabled).toMatchObject({
      status: 'disabled',
      disabledReason: 'every delivery failed for 5 days',
    });
    // Nothing waits any more: what was pending is dead-lettered, for a replay.
    const left = await deliveries().findBy({ endpointId: failingEndpoint.id });
    expect(left.filter((d) => d.status !== 'dead' && d.claimedBy === null)).toEqual([]);
    // The other endpoint of the team is not touched.
    expect((await endpointRow(healthyEndpoint.id)).status).toBe('active');
    // A disabled endpoint is sent no test event: it would only be dead-lettered.
    await expect(
      t.app.get(WebhooksService).sendTest(operator, team.id, failingEndpoint.id),
    ).rejects.toMatchObject({
      fields: {
        delivery: 'The endpoint is disabled: register it again before sending it a test event.',
      },
    });

    const mail = await t.mail.waitFor({
      to: owner.email,
      subject: 'A webhook endpoint of your team was disabled',
    });
    expect(mail.text).toContain(failing.url);
    expect(mail.text).toContain('every delivery failed for 5 days');
    // The owners only, each once: the admin is not mailed.
    const notices = await t.dataSource
      .getRepository(OutboxMessage)
      .findBy({ kind: 'webhook-disabled' });
    expect(notices.map((n) => n.recipient)).toEqual([owner.email]);
    await t.app.get(AuditLog).flush();
    expect(
      await t.dataSource
        .getRepository(AuditEvent)
        .countBy({ event: 'webhook.disabled', targetId: failingEndpoint.id }),
    ).toBe(1);
  });

  it('should delete delivered and dead-lettered deliveries 30 days old, in its periodic round, and keep the rest', async () => {
    const before = await deliveries().find({ order: { id: 'ASC' } });
    expect(new Set(before.map((d) => d.status))).toEqual(new Set(['delivered', 'dead']));
    const oldest = Math.min(...before.map((d) => d.createdAt.getTime()));

    // Thirty days after the oldest, and a little: the oldest goes, the rest are kept.
    clock.set(oldest + 30 * DAY_MS + HOUR_MS);
    const recent = await tested(healthyEndpoint);
    const cutoff = clock.nowMs() - 30 * DAY_MS;
    const expected = [...before.filter((d) => d.createdAt.getTime() >= cutoff), recent!]
      .map((d) => d.id)
      .sort((a, b) => a - b);
    expect(expected.length).toBeLessThan(before.length + 1);
    const kept = await waitFor(
      async () => {
        const ids = (await deliveries().find({ order: { id: 'ASC' } })).map((d) => d.id);
        return ids.length === expected.length && ids;
      },
      { message: () => `still ${before.length} deliveries at ${clock.now().toISOString()}` },
    );
    expect(kept).toEqual(expected);

    // Forty days on, only what came after is left.
    clock.advance(40 * DAY_MS);
    const latest = await tested(healthyEndpoint);
    await waitFor(async () => (await deliveries().count()) === 1, {
      message: () => `deliveries left at ${clock.now().toISOString()}`,
    });
    expect((await deliveries().find()).map((d) => d.id)).toEqual([latest!.id]);
  });

  it('should count the days of failing anew from a replay, so one failure after a long stall does not disable', async () => {
    const stalled = await t.app
      .get(WebhooksService)
      .create(operator, team.id, { url: `${failing.url}/stalled`, events: ['member.joined'] });
    failing.secrets.push(stalled.secret);
    const first = await tested(stalled.endpoint);
    expect(first).toMatchObject({ status: 'pending', responseCode: 500 });
    // Every retry fails, until the delivery is dead-lettered (about 41 hours on).
    for (let attempts = 1; attempts < MAX_ATTEMPTS; attempts++) {
      clock.advance(RETRY_DELAYS_MS[attempts - 1]);
      // A round after the move: the one that recorded the last attempt may have set its timer
      // by the clock as it was, or by the clock as moved (then a moment on, which never comes).
      t.app.get(WebhookSender).wake();
      await waitFor(
        async () => {
          const row = await deliveries().findOneByOrFail({ id: first!.id });
          return row.attempts > attempts && row.claimedBy === null && row;
        },
        { message: () => `no attempt ${attempts + 1} at ${clock.now().toISOString()}` },
      );
    }
    expect(await deliveries().findOneByOrFail({ id: first!.id })).toMatchObject({
      status: 'dead',
    });
    expect((await endpointRow(stalled.endpoint.id)).status).toBe('active');

    // Days later, nothing sent meanwhile, someone replays it, and it fails once more.
    clock.advance(5 * DAY_MS);
    await t.app.get(WebhooksService).replay(operator, team.id, stalled.endpoint.id, first!.id);
    const replayedAt = clock.nowMs();
    await waitFor(async () => {
      const row = await deliveries().findOneByOrFail({ id: first!.id });
      return row.attempts === 1 && row.claimedBy === null && row;
    });
    const endpoint = await endpointRow(stalled.endpoint.id);
    expect(endpoint.status).toBe('active');
    expect(endpoint.failingSince?.getTime()).toBe(replayedAt);
  });
  it('should clear the failing mark when a retry succeeds, so the five days start over', async () => {
    const recovering = await new WebhookReceiver(clock).start();
    try {
      recovering.answer = { status: 503 };
      const created = await t.app
        .get(WebhooksService)
        .create(operator, team.id, { url: recovering.url, events: ['member.joined'] });
      recovering.secrets.push(created.secret);
      const failedAt = clock.nowMs();
      const first = await tested(created.endpoint);
      expect(first).toMatchObject({ status: 'pending', responseCode: 503 });
      expect((await endpointRow(created.endpoint.id)).failingSince?.getTime()).toBe(failedAt);

      recovering.answer = { status: 200 };
      // Every failed delivery of the endpoint is retried, an hour at a time, and delivered.
      await waitFor(
        async () => {
          const left = await deliveries().countBy({
            endpointId: created.endpoint.id,
            status: 'pending',
          });
          if (left > 0) {
            clock.advance(HOUR_MS);
            t.app.get(WebhookSender).wake();
          }
          return left === 0;
        },
        { message: () => `deliveries still pending at ${clock.now().toISOString()}` },
      );
      clock.advance(HOUR_MS);
      const [ok, failing] = await inOneRound(created.endpoint, [200, 503]);
      expect([ok.responseCode, failing.responseCode]).toEqual([200, 503]);
      expect((await endpointRow(created.endpoint.id)).failingSince?.getTime()).toBe(clock.nowMs());
    } finally {
      await recovering.stop();
    }

    /**
     * Two test events answered `statuses` in turn, sent in one round of the sender: they wait
     * while its round under way is held on a first one, so the next round takes them together.
     */
    async function inOneRound(endpoint: WebhookEndpoint, statuses: number[]) {
      let release = (): void => undefined;
      recovering.holding = new Promise<void>((resolve) => (release = resolve));
      const before = recovering.hosts.length;
      const held = tested(endpoint);
      await waitFor(() => recovering.hosts.length > before, { message: () => 'nothing held' });
      recovering.nextAnswers.push(...statuses.map((status) => ({ status })));
      const sent = [];
      for (let i = 0; i < statuses.length; i++)
        sent.push(await t.app.get(WebhooksService).sendTest(operator, team.id, endpoint.id));
      recovering.holding = null;
      release();
      const attempts = await Promise.all(sent.map((id) => attempted(t.dataSource, id)));
      expect(await held).toMatchObject({ status: 'delivered' });
      return attempts;
    }
  });
});
