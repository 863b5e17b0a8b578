import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Not, IsNull } from 'typeorm';
import { AuditEvent } from '../src/audit/audit-event.entity.js';
import { AuditLog } from '../src/audit/audit-log.js';
import { runCli } from '../src/cli/run-cli.js';
import { Actors } from '../src/common/actor.js';
import { ServiceAccountsService } from '../src/service-accounts/service-accounts.service.js';
import { WebhookDelivery } from '../src/webhooks/webhook-delivery.entity.js';
import { WebhookEndpoint } from '../src/webhooks/webhook-endpoint.entity.js';
import { WebhooksService } from '../src/webhooks/webhooks.service.js';
import { createTeam, createUser } from './factories/index.js';
import { ClusterClock } from './support/cluster-clock.js';
import { SHARED_SECRET } from './support/instances.js';
import { TestSmtpServer } from './support/smtp-server.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';
import { waitFor } from './support/wait-for.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

const operator = Actors.operator();
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * The operator's endpoints listed in WEBHOOK_ENDPOINTS: registered when the server starts (each
 * once, when two instances start at the same moment, and not again at a restart), kept as the
 * list says (events, a new secret as a rotation, an endpoint taken off it deleted), sent every
 * team's events, and shown read-only by the command line.
 */
describe('webhooks: the operator endpoints WEBHOOK_ENDPOINTS lists', () => {
  const clock = new ClusterClock(2);
  let database: TestDatabase;
  let mail: TestSmtpServer;
  let receiver: WebhookReceiver;
  let running: TestApp[] = [];
  const secrets = { a: newSecret(), b: newSecret(), a2: newSecret() };
  let urls: { a: string; b: string };

  const base = () => ({
    SESSION_SECRET: SHARED_SECRET,
    WEBHOOK_ALLOWED_RANGES: '127.0.0.1/32',
    RATE_LIMIT_ENABLED: 'false',
  });
  const listing = (endpoints: { url: string; events: string[]; secret: string }[]) =>
    JSON.stringify(endpoints);
  const firstList = () =>
    listing([
      { url: urls.a, events: ['service_account.created', 'member.joined'], secret: secrets.a },
      { url: urls.b, events: ['token.revoked'], secret: secrets.b },
    ]);
  /**
   * Instances started at the same moment, each with the list and a clock of its own (not one
   * a running instance has: see ClusterClock).
   */
  const start = async (count: number, list: string) => {
    const first = running.length;
    const apps = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        createTestApp(
          { ...base(), WEBHOOK_ENDPOINTS: list },
          { database, mail, clock: clock.clocks[first + i] },
        ),
      ),
    );
    running.push(...apps);
    return apps;
  };
  const stopAll = async () => {
    for (const app of running) await app.close();
    running = [];
  };
  const configured = () =>
    running[0].dataSource
      .getRepository(WebhookEndpoint)
      .find({ where: { configKey: Not(IsNull()) }, order: { id: 'ASC' } });
  const audit = async (event: string) => {
    for (const app of running) await app.app.get(AuditLog).flush();
    const rows = await running[0].dataSource.getRepository(AuditEvent).findBy({ event });
    return rows.filter((r) => JSON.stringify(r.detail).includes('WEBHOOK_ENDPOINTS'));
  };
  const cli = async (args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const env = {
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      DATABASE_URL: database.url,
      SESSION_SECRET: SHARED_SECRET,
    };
    const code = await runCli(args, {
      env,
      out: (line) => out.push(line),
      err: (line) => err.push(line),
    });
    return { code, out, err };
  };

  beforeAll(async () => {
    database = await createTestDatabase({ file: true });
    mail = await TestSmtpServer.start();
    receiver = await new WebhookReceiver(clock.first).start();
    receiver.secrets = [secrets.a, secrets.b];
    urls = { a: `${receiver.url}/a`, b: `${receiver.url}/b` };
    // The schema first, so that the instances below start on a migrated database together.
    const migrated = await createTestApp(base(), { database, mail });
    await migrated.close();
  });
  afterAll(async () => {
    await stopAll();
    await receiver.stop();
    await mail.stop();
    await database.drop();
  });

  it('should register each listed endpoint once when two instances start at the same moment', async () => {
    await start(2, firstList());
    const rows = await configured();
    expect(rows.map((r) => [r.url, r.teamId, r.events, r.status])).toEqual([
      [urls.a, null, 'member.joined,service_account.created', 'active'],
      [urls.b, null, 'token.revoked', 'active'],
    ]);
    expect(rows.every((r) => !r.secret.includes(secrets.a.slice(6, 20)))).toBe(true);
    const created = await audit('webhook.created');
    expect(created.map((e) => [e.actorKind, e.targetId])).toEqual(
      rows.map((r) => ['system', r.id]),
    );
  });

  it("should send every team's events to them, signed with the listed secret", async () => {
    const owner = await createUser(running[1].app, { name: 'Listed Owner' });
    const team = await createTeam(running[1].app, owner, 'Listened To');
    const account = await running[1].app
      .get(ServiceAccountsService)
      .create(operator, team.id, { name: 'bot' });
    const got = await waitFor(() =>
      receiver.received.find((r) => r.type === 'service_account.created'),
    );
    expect(got.payload.data).toMatchObject({ team_id: team.id, service_account_id: account.id });
    const [a] = await configured();
    await waitFor(async () =>
      (
        await running[0].dataSource.getRepository(WebhookDelivery).findBy({ endpointId: a.id })
      ).every((d) => d.status === 'delivered'),
    );
    expect(receiver.rejected).toEqual([]);
  });

  it('should list them read-only on the command line, and refuse to rotate or delete them there', async () => {
    const rows = await configured();
    const listed = await cli(['webhook:list']);
    expect(listed.code).toBe(0);
    expect(listed.out[0]).toBe('id\tteam\turl\tevents\tstatus\tsource\tcreated');
    expect(listed.out.slice(1).map((l) => l.split('\t').slice(0, 6))).toEqual([
      [
        String(rows[0].id),
        '*',
        urls.a,
        'member.joined,service_account.created',
        'active',
        'environment',
      ],
      [String(rows[1].id), '*', urls.b, 'token.revoked', 'active', 'environment'],
    ]);
    const rotate = await cli(['webhook:rotate-secret', '--id', String(rows[0].id)]);
    expect(rotate.code).toBe(1);
    expect(rotate.err.join('\n')).toContain('listed in WEBHOOK_ENDPOINTS');
    await expect(
      running[0].app.get(WebhooksService).delete(operator, null, rows[1].id),
    ).rejects.toMatchObject({ fields: { url: expect.stringContaining('WEBHOOK_ENDPOINTS') } });
    expect(await configured()).toHaveLength(2);
  });

  it('should change nothing when an instance restarts with the same list', async () => {
    const before = await configured();
    await running.pop()!.close();
    await start(1, firstList());
    expect(await configured()).toEqual(before);
    expect(await audit('webhook.created')).toHaveLength(2);
  });

  it('should enable a listed endpoint that was disabled again when the server restarts', async () => {
    const [a] = await configured();
    receiver.answer = { status: 410 };
    try {
      const id = await running[0].app.get(WebhooksService).sendTest(operator, null, a.id);
      await waitFor(async () => (await configured())[0].status === 'disabled', {
        message: () => `no answer to ${id} recorded`,
      });
    } finally {
      receiver.answer = { status: 200 };
    }
    await stopAll();
    await start(1, firstList());
    const [again] = await configured();
    expect(again).toMatchObject({ id: a.id, status: 'active', disabledReason: null });
  });

  it('should follow a changed list: new events, a new secret signing beside the old for a day, and an endpoint taken off deleted', async () => {
    const [a, b] = await configured();
    await stopAll();
    await start(2, listing([{ url: urls.a, events: ['member.joined'], secret: secrets.a2 }]));
    const rows = await configured();
    expect(rows.map((r) => [r.id, r.events])).toEqual([[a.id, 'member.joined']]);
    expect(rows[0].previousSecretUntil?.getTime()).toBe(clock.nowMs() + 24 * 3_600_000);
    expect(await running[0].dataSource.getRepository(WebhookEndpoint).countBy({ id: b.id })).toBe(
      0,
    );
    expect((await audit('webhook.deleted')).map((e) => e.targetId)).toEqual([b.id]);
    expect((await audit('webhook.secret_rotated')).map((e) => e.targetId)).toEqual([a.id]);

    // Signed with both: a receiver that knows either secret alone verifies it.
    for (const secret of [secrets.a, secrets.a2]) {
      receiver.secrets = [secret];
      const id = await running[0].app.get(WebhooksService).sendTest(operator, null, a.id);
      await waitFor(() => receiver.received.find((r) => r.id === id));
    }
    expect(receiver.rejected).toEqual([]);
  });

  it('should refuse to start with a name that is not an event, saying which', async () => {
    await expect(
      createTestApp(
        {
          ...base(),
          WEBHOOK_ENDPOINTS: listing([
            { url: urls.a, events: ['token.revoked', 'token.exploded'], secret: secrets.a },
          ]),
        },
        { database, mail },
      ),
    ).rejects.toThrow(
      `WEBHOOK_ENDPOINTS: endpoint 1 (${urls.a}) names "token.exploded", not an event`,
    );
  });
});
