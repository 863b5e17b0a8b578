import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import request from 'supertest';
import { AuditEvent } from '../src/audit/audit-event.entity.js';
import { AuditLog } from '../src/audit/audit-log.js';
import { ManualClock } from '../src/clock/clock.js';
import { Actors } from '../src/common/actor.js';
import { ServiceAccountsService } from '../src/service-accounts/service-accounts.service.js';
import type { Team } from '../src/teams/team.entity.js';
import { TokenExpiryReminders } from '../src/tokens/token-expiry-reminders.js';
import { TokenUsageRecorder } from '../src/tokens/token-usage-recorder.js';
import type { CreatedToken } from '../src/tokens/tokens.service.js';
import { WebhookDelivery } from '../src/webhooks/webhook-delivery.entity.js';
import type { WebhookEndpoint } from '../src/webhooks/webhook-endpoint.entity.js';
import { WebhooksService } from '../src/webhooks/webhooks.service.js';
import { createTeam, createToken, createUser } from './factories/index.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { waitFor } from './support/wait-for.js';
import { WebhookReceiver, type Received } from './support/webhook-receiver.js';

const operator = Actors.operator();
const DAY_MS = 86_400_000;
const EVENTS = ['token.expiring', 'token.used_from_new_address', 'token.revoked'];
// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020;

/**
 * `token.used_from_new_address` and `token.expiring`, sent from the transaction that records
 * them (the token usage's flush, the expiry reminder's claim): a service account's token to its
 * team's endpoints and the operator's, a personal token to the operator's only; each once, and
 * each payload valid against its schema in the API document.
 */
describe('webhooks: the token events of usage and expiry', () => {
  // A few seconds ahead of the database's clock, which stamps a token's creation.
  const clock = new ManualClock(Date.now() + 5_000);
  let t: TestApp;
  let receiver: WebhookReceiver;
  let team: Team;
  let teamEndpoint: WebhookEndpoint;
  let operatorEndpoint: WebhookEndpoint;
  let robot: CreatedToken;
  let personal: CreatedToken;
  /** The service account the robot's token is of. */
  let robotUserId: number;
  let validate: (type: string, payload: unknown) => unknown;

  beforeAll(async () => {
    t = await createTestApp(
      { WEBHOOK_ALLOWED_RANGES: '127.0.0.1/32', RATE_LIMIT_ENABLED: 'false' },
      { clock },
    );
    receiver = await new WebhookReceiver(clock).start();
    const owner = await createUser(t.app, { name: 'Token Owner' });
    team = await createTeam(t.app, owner, 'Watched Tokens');
    const hooks = t.app.get(WebhooksService);
    for (const [teamId, path] of [
      [team.id, 'team'],
      [null, 'operator'],
    ] as const) {
      const created = await hooks.create(operator, teamId, {
        url: `${receiver.url}/${path}`,
        events: EVENTS,
      });
      receiver.secrets.push(created.secret);
      if (teamId === null) operatorEndpoint = created.endpoint;
      else teamEndpoint = created.endpoint;
    }
    const accounts = t.app.get(ServiceAccountsService);
    const account = await accounts.create(operator, team.id, { name: 'deployer' });
    robotUserId = account.id;
    robot = await accounts.createToken(operator, team.id, account.id, {
      name: 'deploy',
      expiresInDays: 30,
    });
    personal = await createToken(t.app, owner, { name: 'laptop', expiresInDays: 30 });

    const document = (await request(t.server).get('/api/v1/openapi.json')).body as {
      webhooks: Record<
        string,
        { post: { requestBody: { content: Record<string, { schema: object }> } } }
      >;
    };
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    validate = (type, payload) => {
      const check = ajv.compile(
        document.webhooks[type].post.requestBody.content['application/json'].schema,
      );
      return { valid: check(payload), errors: check.errors ?? null };
    };
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });

  /** The event about the token, once delivered, and the endpoints it went to. */
  const deliveredAbout = async (type: string, tokenId: number) => {
    const got = await waitFor(() =>
      receiver.received.find(
        (r) => r.type === type && (r.payload.data as { token_id?: number }).token_id === tokenId,
      ),
    );
    const rows = await waitFor(async () => {
      const found = await t.dataSource.getRepository(WebhookDelivery).findBy({ messageId: got.id });
      return found.every((d) => d.status === 'delivered') && found;
    });
    return { got, endpoints: rows.map((d) => d.endpointId).sort((a, b) => a - b) };
  };
  const sent = (type: string, tokenId: number): Received[] =>
    receiver.received.filter(
      (r) => r.type === type && (r.payload.data as { token_id?: number }).token_id === tokenId,
    );
  const use = async (token: CreatedToken) => {
    const res = await request(t.server)
      .get('/api/v1/token')
      .set('Authorization', `Bearer ${token.plaintext}`);
    expect(res.status).toBe(200);
  };

  it('should send token.used_from_new_address from the usage flush, once per address', async () => {
    await use(robot);
    await use(personal);
    await t.app.get(TokenUsageRecorder).flush();

    const fromRobot = await deliveredAbout('token.used_from_new_address', robot.token.id);
    expect(fromRobot.endpoints).toEqual(
      [teamEndpoint.id, operatorEndpoint.id].sort((a, b) => a - b),
    );
    expect(fromRobot.got.payload.data).toEqual({
      team_id: team.id,
      actor: { kind: 'token', user_id: robotUserId, token_id: robot.token.id },
      token_id: robot.token.id,
      name: 'deploy',
      ip: expect.stringMatching(/127\.0\.0\.1|::1/),
    });
    expect(validate('token.used_from_new_address', fromRobot.got.payload)).toEqual({
      valid: true,
      errors: null,
    });
    // A personal token acts in no team: the operator's endpoints hear of it, no team's.
    const fromPersonal = await deliveredAbout('token.used_from_new_address', personal.token.id);
    expect(fromPersonal.endpoints).toEqual([operatorEndpoint.id]);
    expect(fromPersonal.got.payload.data).toMatchObject({ team_id: null, name: 'laptop' });

    // The security log holds the event the delivery reports.
    await t.app.get(AuditLog).flush();
    const logged = await t.dataSource
      .getRepository(AuditEvent)
      .findBy({ event: 'token.new_ip', tokenId: robot.token.id });
    const { ip } = fromRobot.got.payload.data as { ip: string };
    expect(logged.map((e) => [e.teamId, JSON.parse(String(e.detail))])).toEqual([
      [team.id, { name: 'deploy', ip }],
    ]);

    // The same address again is nothing new.
    await use(robot);
    await t.app.get(TokenUsageRecorder).flush();
    await t.app.get(AuditLog).flush();
    expect(sent('token.used_from_new_address', robot.token.id)).toHaveLength(2);
    expect(
      await t.dataSource
        .getRepository(WebhookDelivery)
        .countBy({ eventType: 'token.used_from_new_address' }),
    ).toBe(3);
  });

  it('should send token.expiring with the week-ahead reminder, once', async () => {
    clock.set(robot.token.expiresAt!.getTime() - 7 * DAY_MS + 3_600_000);
    const reminders = t.app.get(TokenExpiryReminders);
    await reminders.run();
    await reminders.run();

    const robotSoon = await deliveredAbout('token.expiring', robot.token.id);
    expect(robotSoon.endpoints).toEqual(
      [teamEndpoint.id, operatorEndpoint.id].sort((a, b) => a - b),
    );
    expect(robotSoon.got.payload).toEqual({
      type: 'token.expiring',
      timestamp: clock.now().toISOString(),
      data: {
        team_id: team.id,
        actor: { kind: 'system' },
        token_id: robot.token.id,
        user_id: robotUserId,
        name: 'deploy',
        expires_at: robot.token.expiresAt!.toISOString(),
      },
    });
    expect(validate('token.expiring', robotSoon.got.payload)).toEqual({
      valid: true,
      errors: null,
    });
    const personalSoon = await deliveredAbout('token.expiring', personal.token.id);
    expect(personalSoon.endpoints).toEqual([operatorEndpoint.id]);

    await t.app.get(AuditLog).flush();
    expect(
      await t.dataSource
        .getRepository(AuditEvent)
        .countBy({ event: 'token.expiry_reminded', tokenId: robot.token.id }),
    ).toBe(1);
    expect(sent('token.expiring', robot.token.id)).toHaveLength(2);
    expect(receiver.rejected).toEqual([]);
  });

  it("should send token.revoked with the reason expiry to a service account's team, once", async () => {
    clock.set(robot.token.expiresAt!.getTime() + 60_000);
    const reminders = t.app.get(TokenExpiryReminders);
    await reminders.run();
    await reminders.run();

    const robotGone = await deliveredAbout('token.revoked', robot.token.id);
    expect(robotGone.endpoints).toEqual(
      [teamEndpoint.id, operatorEndpoint.id].sort((a, b) => a - b),
    );
    expect(robotGone.got.payload.data).toMatchObject({
      team_id: team.id,
      token_id: robot.token.id,
      name: 'deploy',
      reason: 'expiry',
    });
    expect(validate('token.revoked', robotGone.got.payload)).toEqual({ valid: true, errors: null });
    // A personal token acts in no team: the operator's endpoint alone.
    const personalGone = await deliveredAbout('token.revoked', personal.token.id);
    expect(personalGone.endpoints).toEqual([operatorEndpoint.id]);
    expect(sent('token.revoked', robot.token.id)).toHaveLength(2);
    expect(receiver.rejected).toEqual([]);
  });
});
