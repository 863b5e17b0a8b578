import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { MoreThan } from 'typeorm';
import { AuditEvent } from '../src/audit/audit-event.entity.js';
import { AuditLog } from '../src/audit/audit-log.js';
import { Actors } from '../src/common/actor.js';
import { Transactions } from '../src/database/transactions.js';
import { toExportLine } from '../src/security-log/audit.view.js';
import { ServiceAccountsService } from '../src/service-accounts/service-accounts.service.js';
import type { Team } from '../src/teams/team.entity.js';
import { AuditStreamBatches, STREAM_BODY_MAX_BYTES } from '../src/webhooks/audit-stream-batches.js';
import { AuditStreamEntry } from '../src/webhooks/audit-stream-entry.entity.js';
import { MAX_ATTEMPTS } from '../src/webhooks/retry-schedule.js';
import { WebhookDelivery } from '../src/webhooks/webhook-delivery.entity.js';
import { WebhookEndpoint } from '../src/webhooks/webhook-endpoint.entity.js';
import { WebhookSender } from '../src/webhooks/webhook-sender.js';
import { WebhooksService } from '../src/webhooks/webhooks.service.js';
import { addMember, createTeam, createUser } from './factories/index.js';
import { AuditStreamReceiver } from './support/audit-stream-receiver.js';
import { ClusterClock } from './support/cluster-clock.js';
import { startInstances, type Instances } from './support/instances.js';
import { signedInPerson } from './support/people.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { waitFor } from './support/wait-for.js';

const operator = Actors.operator();

describe('audit streams', () => {
  const clock = new ClusterClock(2, Date.parse('2026-11-20T09:00:00Z'));
  let deployment: Instances;
  let receiver: AuditStreamReceiver;
  let team: Team;
  let other: Team;
  let n = 0;

  beforeAll(async () => {
    deployment = await startInstances(
      2,
      {
        WEBHOOK_ALLOWED_RANGES: '127.0.0.0/8',
        WEBHOOK_TIMEOUT_MS: '2000',
        SERVICE_ACCOUNTS_PER_TEAM: '1000',
        RATE_LIMIT_ENABLED: 'false',
      },
      { clocks: clock.clocks },
    );
    receiver = await new AuditStreamReceiver().start();
    const owner = await createUser(deployment.first.app, { name: 'Stream Owner' });
    team = await createTeam(deployment.first.app, owner, 'Streamed');
    other = await createTeam(deployment.first.app, owner, 'Also streamed');
  });
  afterAll(async () => {
    await deployment.close();
    await receiver.stop();
  });

  const db = () => deployment.first.dataSource;
  /** Writes what each instance has recorded to the log (and so to the streams' queue). */
  const flushLogs = () => Promise.all(deployment.apps.map((a) => a.app.get(AuditLog).flush()));
  /** One team event (a service account made) on the i-th instance, written to the log. */
  const change = async (i: number, of: Team = team) => {
    const app = deployment.apps[i % 2].app;
    await app.get(ServiceAccountsService).create(operator, of.id, { name: `bot-${++n}` });
    await app.get(AuditLog).flush();
  };
  const lastLogId = async () => {
    await flushLogs();
    const [last] = await db()
      .getRepository(AuditEvent)
      .find({ order: { id: 'DESC' }, take: 1 });
    return last ? Number(last.id) : 0;
  };
  const register = async (teamId: number | null, url: string, authorization?: string) => {
    const created = await deployment.first.app
      .get(WebhooksService)
      .createAuditStream(operator, teamId, { url, authorization });
    receiver.secrets.push(created.secret);
    return created.endpoint;
  };
  const remove = (endpoint: WebhookEndpoint) =>
    deployment.first.app.get(WebhooksService).delete(operator, endpoint.teamId, endpoint.id);
  /** The log's rows after `afterId` (of one team, or all), oldest first. */
  const logAfter = async (afterId: number, teamId?: number) => {
    await flushLogs();
    return db()
      .getRepository(AuditEvent)
      .find({
        where: { id: MoreThan(afterId), ...(teamId === undefined ? {} : { teamId }) },
        order: { id: 'ASC' },
      });
  };
  /** The lines received for the stream's deliveries, batch by batch, once all are delivered. */
  const delivered = async (endpointId: number, ids: number[]) => {
    let seen: WebhookDelivery[] = [];
    return waitFor(
      async () => {
        seen = await db()
          .getRepository(WebhookDelivery)
          .find({ where: { endpointId }, order: { id: 'ASC' } });
        const messages = new Set(seen.map((d) => d.messageId));
        const got = receiver.batches.filter((b) => messages.has(b.id));
        const lineIds = new Set(got.flatMap((b) => b.lines.map((l) => l.id)));
        const done =
          ids.every((id) => lineIds.has(id)) && seen.every((d) => d.status === 'delivered');
        // A sender that finished its round just before a retry came due looks again on its clock.
        if (!done && seen.some((d) => d.status === 'pending' && d.nextAttemptAt <= clock.now())) {
          await clock.advance(1_000);
        }
        return done && { deliveries: seen, batches: got };
      },
      {
        timeoutMs: 120_000,
        message: () =>
          `waiting for ${ids.length} entries: ${JSON.stringify(
            seen.map((d) => [d.status, d.attempts, d.lastError, d.payload.split('\n').length - 1]),
          )}`,
      },
    );
  };

  it("should send the team's audit log in order, in signed batches of JSON lines, each entry once, across a receiver outage", async () => {
    const proxy = await new TcpProxy('127.0.0.1', receiver.port).start();
    try {
      const before = await lastLogId();
      const endpoint = await register(
        team.id,
        `http://127.0.0.1:${proxy.port}/collector`,
        'Splunk 0d5f1a2b-collector-token',
      );
      const stored = await db().getRepository(WebhookEndpoint).findOneByOrFail({ id: endpoint.id });
      expect(stored.kind).toBe('audit_stream');
      expect(stored.authorizationHeader).not.toContain('collector-token');

      await proxy.cut();
      for (let i = 0; i < 6; i++) await change(i);
      // The first batch failed; the stream waits for it, so everything else queues behind it.
      const failed = await waitFor(async () => {
        const rows = await db().getRepository(WebhookDelivery).findBy({ endpointId: endpoint.id });
        return rows.length === 1 && rows[0].attempts === 1 && rows[0].claimedBy === null && rows;
      });
      expect(failed[0]).toMatchObject({ status: 'pending', eventType: 'audit.entries' });
      expect(failed[0].lastError).toMatch(/ECONNREFUSED/);
      await proxy.restore();
      await clock.advance(6_000);

      const log = await logAfter(before, team.id);
      expect(log.map((e) => e.event)).toContain('webhook.created');
      expect(log.filter((e) => e.event === 'service_account.created')).toHaveLength(6);
      const { deliveries, batches } = await delivered(
        endpoint.id,
        log.map((e) => Number(e.id)),
      );
      // Every entry of the team's log since, once, in the log's order, as audit:export writes it.
      const lines = batches.flatMap((b) => b.lines);
      expect(lines).toEqual(log.map((e) => JSON.parse(JSON.stringify(toExportLine(e)))));
      expect(batches.length).toBeLessThan(lines.length);
      expect(deliveries.map((d) => d.messageId)).toEqual(batches.map((b) => b.id));
      for (const b of batches) {
        expect(b.headers.authorization).toBe('Splunk 0d5f1a2b-collector-token');
        expect(b.headers['content-type']).toBe('application/x-ndjson');
      }
      // Each batch sent once: the failed attempt never reached the receiver.
      expect(new Set(batches.map((b) => b.id)).size).toBe(batches.length);
      expect(receiver.rejected).toEqual([]);
      expect(await db().getRepository(AuditStreamEntry).countBy({ endpointId: endpoint.id })).toBe(
        0,
      );
      await remove(endpoint);
    } finally {
      await proxy.stop();
    }
  });

  it("should send the operator's stream the entries of every team and of no team", async () => {
    const before = await lastLogId();
    const endpoint = await register(null, receiver.url);
    await change(0, team);
    await change(1, other);
    const log = await logAfter(before);
    expect(new Set(log.map((e) => e.teamId))).toEqual(new Set([null, team.id, other.id]));
    const { batches } = await delivered(
      endpoint.id,
      log.map((e) => Number(e.id)),
    );
    const ids = batches.flatMap((b) => b.lines.map((l) => l.id));
    expect(ids).toEqual(log.map((e) => Number(e.id)));
    await remove(endpoint);
  });

  it('should send nothing for a change that rolled back', async () => {
    const before = await lastLogId();
    const endpoint = await register(team.id, receiver.url);
    await expect(
      deployment.first.app.get(Transactions).run(async (m) => {
        deployment.first.app.get(AuditLog).recordIn(m, operator, {
          event: 'team.policy_changed',
          teamId: team.id,
          target: { type: 'team', id: team.id },
          detail: { team: 'rolled back' },
        });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    await change(0);
    const log = await logAfter(before, team.id);
    const { batches } = await delivered(
      endpoint.id,
      log.map((e) => Number(e.id)),
    );
    const lines = batches.flatMap((b) => b.lines);
    expect(lines.map((l) => l.event)).toEqual(['webhook.created', 'service_account.created']);
    expect(JSON.stringify(lines)).not.toContain('rolled back');
    await remove(endpoint);
  });

  it('should stall a stream on a dead batch, sending nothing after it until it is replayed, and keep that batch past the 30 days of the log', async () => {
    // An endpoint of events with one delivery, to see when the delivery log was pruned.
    const probe = await deployment.first.app
      .get(WebhooksService)
      .create(operator, team.id, { url: receiver.url, events: ['member.joined'] });
    receiver.secrets.push(probe.secret);
    const probeMessage = await deployment.first.app
      .get(WebhooksService)
      .sendTest(operator, team.id, probe.endpoint.id);
    await waitFor(
      async () =>
        (await db().getRepository(WebhookDelivery).findOneBy({ messageId: probeMessage }))
          ?.status === 'delivered',
    );
    const before = await lastLogId();
    receiver.status = 500;
    const endpoint = await register(team.id, receiver.url);
    try {
      const deliveries = () =>
        db().getRepository(WebhookDelivery).findBy({ endpointId: endpoint.id });
      /** The stream's one delivery once it has been tried `attempts` times and let go. */
      const tried = (attempts: number) =>
        waitFor(async () => {
          const rows = await deliveries();
          return (
            rows.length === 1 && rows[0].attempts === attempts && !rows[0].claimedBy && rows[0]
          );
        });
      let row = await tried(1);
      await change(0);
      await change(1);
      for (let attempt = 2; attempt <= MAX_ATTEMPTS; attempt++) {
        expect(row.status).toBe('pending');
        await clock.advance(row.nextAttemptAt.getTime() - clock.nowMs());
        // A round after the move: the one that recorded the last attempt may have set its timer
        // by the clock as it was, or by the clock as moved (then a moment on, which never comes).
        for (const { app } of deployment.apps) app.get(WebhookSender).wake();
        row = await tried(attempt);
      }
      expect(row).toMatchObject({ status: 'dead', lastError: 'answered 500' });
      expect(receiver.tries.get(row.messageId)).toBe(MAX_ATTEMPTS);
      // Stalled: the entries since wait behind the dead batch, on either instance.
      for (const { app } of deployment.apps)
        expect(await app.get(AuditStreamBatches).form()).toBe(0);
      expect(await deliveries()).toHaveLength(1);
      expect(
        await db().getRepository(AuditStreamEntry).countBy({ endpointId: endpoint.id }),
      ).toBeGreaterThan(0);

      // A month on, the sender's periodic round prunes the delivery log, but not the batch
      // the stream waits for.
      await clock.advance(31 * 86_400_000);
      for (const { app } of deployment.apps) app.get(WebhookSender).wake();
      await waitFor(
        async () =>
          (await db().getRepository(WebhookDelivery).countBy({ endpointId: probe.endpoint.id })) ===
          0,
      );
      expect(await deliveries()).toEqual([expect.objectContaining({ id: row.id, status: 'dead' })]);

      // Its page says so to the team's admins, and replays the dead batch.
      const admin = await signedInPerson(deployment.first, { name: 'Stream Admin' });
      await addMember(deployment.first.app, team.id, admin.user, 'admin');
      const page = `/teams/${team.id}/webhooks/${endpoint.id}`;
      const stalled = await admin.client.get(page);
      expect(stalled.text).toContain('data-stream-stalled');
      expect(stalled.text).toContain(`${page}/deliveries/${row.id}/replay`);
      // Disabled, a stream keeps nothing and sends nothing: it is neither said to be stalled nor
      // offers a replay, which would be refused.
      const endpoints = db().getRepository(WebhookEndpoint);
      await endpoints.update({ id: endpoint.id }, { status: 'disabled' });
      const off = await admin.client.get(page);
      expect(off.text).not.toContain('data-stream-stalled');
      expect(off.text).not.toContain('/replay');
      await endpoints.update({ id: endpoint.id }, { status: 'active' });
      receiver.status = 200;
      const replayed = await admin.client.submit(page, `${page}/deliveries/${row.id}/replay`);
      expect(replayed.status).toBe(303);
      const log = await logAfter(before, team.id);
      const { batches } = await delivered(
        endpoint.id,
        log.map((e) => Number(e.id)),
      );
      // The replayed batch first, with the webhook-id it had, then the entries that waited.
      expect(batches[0].id).toBe(row.messageId);
      expect(batches.flatMap((b) => b.lines.map((l) => l.id))).toEqual(
        log.map((e) => Number(e.id)),
      );
      expect((await admin.client.get(page)).text).not.toContain('data-stream-stalled');
    } finally {
      receiver.status = 200;
      await remove(endpoint);
      await remove(probe.endpoint);
    }
  });

  it('should split a backlog of large entries into bodies the delivery log can hold', async () => {
    const before = await lastLogId();
    const endpoint = await register(team.id, receiver.url);
    const log = deployment.first.app.get(AuditLog);
    for (let i = 0; i < 100; i++) {
      log.record(operator, {
        event: 'team.policy_changed',
        teamId: team.id,
        // Four facts of 190 two-byte characters: about 1.6 kB a line, 160 kB in all.
        detail: Object.fromEntries(
          ['a', 'b', 'c', 'd'].map((k) => [k, `${i} ${'\u00e9'.repeat(188)}`]),
        ),
      });
    }
    const entries = await logAfter(before, team.id);
    expect(entries).toHaveLength(101);
    const { deliveries, batches } = await delivered(
      endpoint.id,
      entries.map((e) => Number(e.id)),
    );
    const sizes = deliveries.map((d) => Buffer.byteLength(d.payload));
    const total = sizes.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(2 * STREAM_BODY_MAX_BYTES);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(STREAM_BODY_MAX_BYTES);
    expect(batches.length).toBeGreaterThanOrEqual(Math.ceil(total / STREAM_BODY_MAX_BYTES));
    expect(batches.flatMap((b) => b.lines.map((l) => l.id))).toEqual(
      entries.map((e) => Number(e.id)),
    );
    await remove(endpoint);
  });

  it('should send a burst of changes on two instances in batches, each entry and each batch once', async () => {
    const before = await lastLogId();
    const endpoint = await register(team.id, receiver.url);
    const changes: Promise<unknown>[] = [];
    for (let i = 0; i < 120; i++) {
      changes.push(
        deployment.apps[i % 2].app
          .get(ServiceAccountsService)
          .create(operator, team.id, { name: `burst-${++n}` }),
      );
      await nextTurn();
    }
    await Promise.all(changes);
    const log = await logAfter(before, team.id);
    expect(log).toHaveLength(121);
    const { deliveries, batches } = await delivered(
      endpoint.id,
      log.map((e) => Number(e.id)),
    );
    const ids = batches.flatMap((b) => b.lines.map((l) => l.id));
    expect([...ids].sort((a, b) => Number(a) - Number(b))).toEqual(log.map((e) => Number(e.id)));
    expect(new Set(batches.map((b) => b.id)).size).toBe(batches.length);
    expect(batches.length).toBe(deliveries.length);
    expect(Math.max(...batches.map((b) => b.lines.length))).toBeLessThanOrEqual(100);
    await remove(endpoint);
  });
});
