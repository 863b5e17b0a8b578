import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { QueryRunner } from 'typeorm';
import { AuditEventsRepository } from '../src/audit/audit-events.repository.js';
import { AuditLog, toRow } from '../src/audit/audit-log.js';
import { Actors } from '../src/common/actor.js';
import { Clock } from '../src/clock/clock.js';
import { TeamsService } from '../src/teams/teams.service.js';
import type { Team } from '../src/teams/team.entity.js';
import type { User } from '../src/users/user.entity.js';
import { AuditStreamEntry } from '../src/webhooks/audit-stream-entry.entity.js';
import { WebhookDelivery } from '../src/webhooks/webhook-delivery.entity.js';
import { WebhookSender } from '../src/webhooks/webhook-sender.js';
import { WebhooksRepository } from '../src/webhooks/webhooks.repository.js';
import { WebhooksService } from '../src/webhooks/webhooks.service.js';
import { createTeam, createUser } from './factories/index.js';
import { AuditStreamReceiver } from './support/audit-stream-receiver.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { waitFor } from './support/wait-for.js';

const operator = Actors.operator();

/**
 * Two writes to the log that commit in the other order than their ids: the one with the lower
 * id is held open by the test until the other's entry was sent. Its entry is not passed over:
 * it was queued in its own transaction, and goes in the next batch. Runs only with
 * TEST_DATABASE_URL (see jest.config.js): SQLite runs one write transaction at a time, so there
 * a later id never commits first.
 */
describe('audit streams when transactions commit out of id order', () => {
  let t: TestApp;
  let receiver: AuditStreamReceiver;
  let team: Team;

  beforeAll(async () => {
    t = await createTestApp({
      WEBHOOK_ALLOWED_RANGES: '127.0.0.1/32',
      RATE_LIMIT_ENABLED: 'false',
    });
    receiver = await new AuditStreamReceiver().start();
    const owner = await createUser(t.app, { name: 'Order Owner' });
    team = await createTeam(t.app, owner, 'Ordered');
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });

  const entry = (name: string) =>
    toRow(
      operator,
      { event: 'team.policy_changed', teamId: team.id, detail: { team: name } },
      t.app.get(Clock).now(),
    );
  /** Each batch's entries: the policy changes by the name they carry, others by their event. */
  const namesReceived = () =>
    receiver.batches.map((b) =>
      b.lines.map((l) =>
        l.event === 'team.policy_changed' ? (l.detail as { team: string }).team : l.event,
      ),
    );

  it('should send an entry whose transaction committed after a later one, in the batch after it', async () => {
    await t.app.get(AuditLog).flush();
    const created = await t.app
      .get(WebhooksService)
      .createAuditStream(operator, team.id, { url: receiver.url });
    receiver.secrets.push(created.secret);
    await waitFor(() => receiver.batches.length === 1);

    // The earlier entry: written to the log, its transaction still open.
    const runner: QueryRunner = t.dataSource.createQueryRunner();
    await runner.startTransaction();
    try {
      const [early] = await t.app
        .get(AuditEventsRepository)
        .insert(runner.manager, [entry('early')]);

      // The later entry, written and committed meanwhile, is sent on its own.
      t.app.get(AuditLog).record(operator, {
        event: 'team.policy_changed',
        teamId: team.id,
        detail: { team: 'late' },
      });
      await t.app.get(AuditLog).flush();
      await waitFor(() => receiver.batches.length === 2);

      // Now the earlier one's transaction queues its entry, as the log's write does, and commits.
      expect(await t.app.get(WebhooksRepository).queueStreamEntries(runner.manager, [early])).toBe(
        1,
      );
      await runner.commitTransaction();
      t.app.get(WebhookSender).wake();
      await waitFor(() => receiver.batches.length === 3);
      expect(namesReceived()).toEqual([['webhook.created'], ['late'], ['early']]);
      const ids = receiver.lines.map((l) => Number(l.id));
      expect(ids[2]).toBeLessThan(ids[1]);
      // Recorded once the receiver's answer is in, a moment after the receiver has the batch.
      const statuses = async () =>
        (
          await t.dataSource
            .getRepository(WebhookDelivery)
            .findBy({ endpointId: created.endpoint.id })
        ).map((d) => d.status);
      await waitFor(async () => (await statuses()).every((s) => s === 'delivered'));
      expect(await statuses()).toEqual(['delivered', 'delivered', 'delivered']);
    } finally {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      await runner.release();
    }
  });
});

/**
 * Each change queues its security log entry for the audit streams that get it in its own
 * transaction: it reads which with a plain read, which locks nothing, and inserts the rows, whose
 * foreign key share-locks those streams' rows until it commits. A team's webhooks, whose rows
 * deliveries update, and new endpoints do not wait on its changes; a change that waits on one of
 * its streams' rows (a batch being taken) holds up no other team's.
 */
describe('audit streams: what a change holds while it commits', () => {
  let t: TestApp;
  let owner: User;

  beforeAll(async () => {
    t = await createTestApp({
      WEBHOOK_ALLOWED_RANGES: '127.0.0.1/32',
      RATE_LIMIT_ENABLED: 'false',
    });
    owner = await createUser(t.app, { name: 'Held Owner' });
  });
  afterAll(async () => {
    await t.close();
  });

  /** A transaction of the test's own, rolled back at the end unless committed. */
  async function inTransaction(work: (runner: QueryRunner) => Promise<void>): Promise<void> {
    const runner = t.dataSource.createQueryRunner();
    try {
      await runner.startTransaction();
      await work(runner);
    } finally {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      await runner.release();
    }
  }
  const entryOf = (teamId: number) =>
    toRow(operator, { event: 'team.renamed', teamId }, t.app.get(Clock).now());
  const rename = (teamId: number, name: string) =>
    t.app.get(TeamsService).rename(Actors.person(owner.id), teamId, { name });
  const stream = async (teamId: number | null, path: string) =>
    (
      await t.app
        .get(WebhooksService)
        .createAuditStream(operator, teamId, { url: `http://127.0.0.1:9/${path}` })
    ).endpoint;

  it("should change a team while a delivery holds its webhook's row, and hold none of its endpoints itself", async () => {
    const team = await createTeam(t.app, owner, 'Held');
    const hooks = t.app.get(WebhooksService);
    const { endpoint } = await hooks.create(operator, team.id, {
      url: 'http://127.0.0.1:9/hook',
      events: ['member.role_changed'],
    });
    await inTransaction(async (runner) => {
      // A delivery's bookkeeping under way on the team's webhook.
      await runner.query('SELECT id FROM webhook_endpoints WHERE id = ? FOR UPDATE', [endpoint.id]);
      expect((await rename(team.id, 'Held Renamed')).name).toBe('Held Renamed');
    });
    // A change under way (its entry's streams read, none found, not committed) holds none of the
    // team's endpoints, and keeps no new one, of either kind, from being made.
    await inTransaction(async (runner) => {
      const [id] = await t.app
        .get(AuditEventsRepository)
        .insert(runner.manager, [entryOf(team.id)]);
      expect(await t.app.get(WebhooksRepository).queueStreamEntries(runner.manager, [id])).toBe(0);
      const second = await hooks.create(operator, team.id, {
        url: 'http://127.0.0.1:9/second',
        events: ['member.role_changed'],
      });
      expect(second.endpoint.teamId).toBe(team.id);
      expect((await stream(team.id, 'second-stream')).teamId).toBe(team.id);
    });
  });

  it("should not hold up one team's change while another waits for its stream's row", async () => {
    const waiting = await createTeam(t.app, owner, 'Waiting');
    const other = await createTeam(t.app, owner, 'Going On');
    const held = await stream(waiting.id, 'held');
    await stream(other.id, 'free');
    await inTransaction(async (runner) => {
      // A batch being taken from the waiting team's stream.
      await runner.query('SELECT id FROM webhook_endpoints WHERE id = ? FOR UPDATE', [held.id]);
      let settled = false;
      const first = rename(waiting.id, 'Waiting Renamed').finally(() => (settled = true));
      // Its entry's queueing under way, waiting for the stream's row.
      await waitFor(async () => {
        const [{ n }] = await t.dataSource.query(
          "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE INFO LIKE 'INSERT INTO%audit_stream_entries%'",
        );
        return Number(n) > 0;
      });
      expect((await rename(other.id, 'Went On')).name).toBe('Went On');
      expect(settled).toBe(false);
      await runner.commitTransaction();
      expect((await first).name).toBe('Waiting Renamed');
    });
  });

  it('should queue nothing for a stream deleted since it read which streams get the entry, and go on', async () => {
    const team = await createTeam(t.app, owner, 'Deleted Meanwhile');
    const deleted = await stream(team.id, 'deleted');
    const kept = await stream(team.id, 'kept');
    const entries = t.dataSource.getRepository(AuditStreamEntry);
    let id = 0;
    await inTransaction(async (runner) => {
      // The transaction's view is taken before the stream is deleted, and still shows it.
      await runner.query('SELECT COUNT(*) AS n FROM webhook_endpoints');
      await t.app.get(WebhooksService).delete(operator, team.id, deleted.id);
      [id] = await t.app.get(AuditEventsRepository).insert(runner.manager, [entryOf(team.id)]);
      expect(await t.app.get(WebhooksRepository).queueStreamEntries(runner.manager, [id])).toBe(1);
      await runner.commitTransaction();
    });
    expect(await entries.countBy({ auditEventId: id, endpointId: kept.id })).toBe(1);
    expect(await entries.countBy({ auditEventId: id })).toBe(1);
  });
});
