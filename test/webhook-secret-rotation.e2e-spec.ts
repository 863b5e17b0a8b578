import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AuditEvent } from '../src/audit/audit-event.entity.js';
import { AuditLog } from '../src/audit/audit-log.js';
import { runCli } from '../src/cli/run-cli.js';
import { Actors } from '../src/common/actor.js';
import type { Team } from '../src/teams/team.entity.js';
import { WebhookDelivery } from '../src/webhooks/webhook-delivery.entity.js';
import { WebhookEndpoint } from '../src/webhooks/webhook-endpoint.entity.js';
import { WebhooksService } from '../src/webhooks/webhooks.service.js';
import { createTeam } from './factories/index.js';
import { burst, tally } from './support/burst.js';
import { ClusterClock } from './support/cluster-clock.js';
import { startInstances, type Instances } from './support/instances.js';
import { signedInPerson, type SignedInPerson } from './support/people.js';
import { waitFor } from './support/wait-for.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

const TIMES = 10;
const DAY_MS = 24 * 3_600_000;
const operator = Actors.operator();

/** A signing secret a page shows once, read from its read-only field (Handlebars escapes `=`). */
const secretIn = (html: string) =>
  /value="(whsec_[^"]+)"/.exec(html)?.[1].replaceAll('&#x3D;', '=').replaceAll('&#x2F;', '/');

/**
 * Rotating an endpoint's signing secret from its page and from the command line: the new
 * secret shown once, the replaced one signing beside it for 24 hours (checked by the
 * `standardwebhooks` library holding one secret at a time), a burst of the same click on two
 * instances rotating once, and never more than two secrets signing.
 */
describe('webhooks: rotating the signing secret', () => {
  const clock = new ClusterClock(2);
  let deployment: Instances;
  let receiver: WebhookReceiver;
  let owner: SignedInPerson;
  let team: Team;
  let endpointId: number;
  let page: string;
  const secrets: Record<'first' | 'rotated' | 'fromCli', string> = {
    first: '',
    rotated: '',
    fromCli: '',
  };

  beforeAll(async () => {
    deployment = await startInstances(
      2,
      { WEBHOOK_ALLOWED_RANGES: '127.0.0.1/32', RATE_LIMIT_ENABLED: 'false' },
      { clocks: clock.clocks },
    );
    receiver = await new WebhookReceiver(clock.first).start();
    owner = await signedInPerson(deployment.first, { name: 'Rotating Owner' });
    team = await createTeam(deployment.first.app, owner.user, 'Rotators');
  });
  afterAll(async () => {
    await deployment.close();
    await receiver.stop();
  });

  const endpoints = () => deployment.first.dataSource.getRepository(WebhookEndpoint);
  const deliveries = () => deployment.first.dataSource.getRepository(WebhookDelivery);
  const rotations = async () => {
    for (const app of deployment.apps) await app.app.get(AuditLog).flush();
    return deployment.first.dataSource
      .getRepository(AuditEvent)
      .findBy({ event: 'webhook.secret_rotated', teamId: team.id });
  };

  /**
   * Sends a test event to a receiver that holds only `secret`: whether the library verified
   * it, and the signatures it carried.
   */
  const verifiesWith = async (secret: string) => {
    receiver.secrets = [secret];
    const messageId = await deployment.first.app
      .get(WebhooksService)
      .sendTest(operator, team.id, endpointId);
    // Settled: the receiver's answer is recorded, whatever it was.
    await waitFor(async () => {
      const d = await deliveries().findOneBy({ messageId });
      return d !== null && d.attempts === 1 && d.claimedBy === null;
    });
    const got = receiver.received.find((r) => r.id === messageId);
    const refused = receiver.rejected.includes(messageId);
    expect(Boolean(got) !== refused).toBe(true);
    return { verified: Boolean(got), refused };
  };

  it('should rotate once, of a burst of the same click on two instances, and show the new secret once', async () => {
    const created = await owner.client.submit(
      `/teams/${team.id}/webhooks`,
      `/teams/${team.id}/webhooks`,
      { url: receiver.url, events: ['member.joined'] },
    );
    secrets.first = secretIn(created.text)!;
    expect(secrets.first).toMatch(/^whsec_/);
    endpointId = (await endpoints().findOneByOrFail({ teamId: team.id })).id;
    page = `/teams/${team.id}/webhooks/${endpointId}`;

    const shown = (await owner.client.get(page)).text;
    expect(shown).toContain('Rotate secret');
    const version = /name="version" value="([^"]+)"/.exec(shown)![1];
    const csrf = await owner.client.csrfFrom(page);
    const browsers = owner.client.onEach(deployment.servers);
    const answers = await burst(TIMES, deployment.servers, (i) =>
      browsers[i % browsers.length].post(`${page}/rotate-secret`, csrf, { version }),
    );
    // One rotates; the others go back to the page, told the secret changed meanwhile.
    expect(tally(answers, (a) => String(a.status))).toEqual({ '200': 1, '303': TIMES - 1 });
    const winner = answers.find((a) => a.status === 200)!;
    secrets.rotated = secretIn(winner.text)!;
    expect(secrets.rotated).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secrets.rotated).not.toBe(secrets.first);
    expect(winner.text).toContain('data-shown-once');
    const loser = answers.find((a) => a.status === 303)!;
    expect(await owner.client.textOf(loser.headers.location!)).toContain(
      'The signing secret was rotated at the same moment elsewhere',
    );

    const again = (await owner.client.get(page)).text;
    expect(again).not.toContain(secrets.rotated);
    expect(again).toContain('data-previous-secret');
    const row = await endpoints().findOneByOrFail({ id: endpointId });
    expect(row.previousSecretUntil?.getTime()).toBe(clock.nowMs() + DAY_MS);
    expect(row.secret).not.toContain(secrets.rotated.slice(6, 20));
    expect(await rotations()).toEqual([
      expect.objectContaining({
        actorKind: 'user',
        actorUserId: owner.user.id,
        targetId: endpointId,
      }),
    ]);

    // The form sent again later, with the version it showed, changes nothing.
    const late = await owner.client.post(`${page}/rotate-secret`, csrf, { version });
    expect(late.status).toBe(303);
    expect(await rotations()).toHaveLength(1);
    // A version no page shows: back to the page, told to reload it, and nothing rotated.
    const malformedForms: Record<string, string>[] = [
      { version: 'xx' },
      { 'version[]': 'a'.repeat(16) },
    ];
    for (const malformed of malformedForms) {
      const refused = await owner.client.post(`${page}/rotate-secret`, csrf, malformed);
      expect(refused.status).toBe(303);
      expect(await owner.client.textOf(refused.headers.location!)).toContain(
        'Reload the page and try again.',
      );
    }
    expect(await rotations()).toHaveLength(1);
  });

  it('should sign with both secrets during the 24 hours, each verifying alone', async () => {
    expect(await verifiesWith(secrets.first)).toEqual({ verified: true, refused: false });
    expect(await verifiesWith(secrets.rotated)).toEqual({ verified: true, refused: false });
    const last = receiver.received.at(-1)!;
    expect(String(last.headers['webhook-signature']).split(' ')).toHaveLength(2);
  });

  it('should rotate from the command line, printing the new secret last, and keep at most two secrets signing', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(['webhook:rotate-secret', '--id', String(endpointId)], {
      env: {
        NODE_ENV: 'test',
        LOG_LEVEL: 'warn',
        DATABASE_URL: deployment.first.database.url,
        SESSION_SECRET: deployment.first.config.web.sessionSecret,
        WEBHOOK_ALLOWED_RANGES: '127.0.0.1/32',
      },
      out: (line) => out.push(line),
      err: (line) => err.push(line),
    });
    expect({ code, err }).toEqual({ code: 0, err: [] });
    expect(out[0]).toContain(`Webhook endpoint ${endpointId}: ${receiver.url}`);
    secrets.fromCli = out.at(-1)!;
    expect(secrets.fromCli).toMatch(/^whsec_/);
    expect(await rotations()).toHaveLength(2);

    expect(await verifiesWith(secrets.fromCli)).toEqual({ verified: true, refused: false });
    expect(await verifiesWith(secrets.rotated)).toEqual({ verified: true, refused: false });
    expect(await verifiesWith(secrets.first)).toEqual({ verified: false, refused: true });
  });

  it('should sign with the new secret only once 24 hours have passed', async () => {
    // An hour more: the command line rotated on the machine's clock, a little after this one's.
    await clock.advance(DAY_MS + 3_600_000);
    expect(await verifiesWith(secrets.rotated)).toEqual({ verified: false, refused: true });
    expect(await verifiesWith(secrets.fromCli)).toEqual({ verified: true, refused: false });
    const last = receiver.received.at(-1)!;
    expect(String(last.headers['webhook-signature']).split(' ')).toHaveLength(1);
  });

  it('should record a send whose secret cannot be read as a failed attempt saying why, and send again once the secret is rotated', async () => {
    // Signed in anew: the clock has moved past the first owner's session.
    const owner = await signedInPerson(deployment.first, { name: 'Unreadable Owner' });
    const other = await createTeam(deployment.first.app, owner.user, 'Unreadable');
    const created = await owner.client.submit(
      `/teams/${other.id}/webhooks`,
      `/teams/${other.id}/webhooks`,
      { url: receiver.url, events: ['member.joined'] },
    );
    expect(secretIn(created.text)).toMatch(/^whsec_/);
    const unreadable = await endpoints().findOneByOrFail({ teamId: other.id });
    // Sealed for another endpoint: it does not open here, as one sealed under another
    // SESSION_SECRET does not.
    const { secret: sealedElsewhere } = await endpoints().findOneByOrFail({ id: endpointId });
    await endpoints().update({ id: unreadable.id }, { secret: sealedElsewhere });

    const received = receiver.received.length;
    const messageId = await deployment.first.app
      .get(WebhooksService)
      .sendTest(operator, other.id, unreadable.id);
    await waitFor(async () => {
      const d = await deliveries().findOneBy({ messageId });
      return d !== null && d.attempts === 1 && d.claimedBy === null;
    });
    const failed = await deliveries().findOneByOrFail({ messageId });
    expect(failed.status).toBe('pending');
    expect(failed.nextAttemptAt).not.toBeNull();
    expect(failed.lastError).toContain(
      'its signing secret cannot be read with this SESSION_SECRET; rotate the secret',
    );
    expect(receiver.received.length).toBe(received);
    const endpointPage = `/teams/${other.id}/webhooks/${unreadable.id}`;
    const shown = await owner.client.get(endpointPage);
    expect(shown.text).toContain('cannot be read with this SESSION_SECRET');

    // Rotated from the page: the new secret signs alone (the old one, unreadable, is left out).
    const version = /name="version" value="([^"]+)"/.exec(shown.text)![1];
    const rotated = await owner.client.post(
      `${endpointPage}/rotate-secret`,
      await owner.client.csrfFrom(endpointPage),
      { version },
    );
    expect(rotated.status).toBe(200);
    receiver.secrets = [secretIn(rotated.text)!];
    const again = await deployment.first.app
      .get(WebhooksService)
      .sendTest(operator, other.id, unreadable.id);
    await waitFor(() => receiver.received.some((r) => r.id === again));
    const sent = receiver.received.find((r) => r.id === again)!;
    expect(String(sent.headers['webhook-signature']).split(' ')).toHaveLength(1);
  });
});
