import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { AuditEvent } from '../src/audit/audit-event.entity.js';
import { AuditLog } from '../src/audit/audit-log.js';
import { runCli } from '../src/cli/run-cli.js';
import { ManualClock } from '../src/clock/clock.js';
import { Actors } from '../src/common/actor.js';
import { Scheduler } from '../src/scheduler/scheduler.js';
import { Team } from '../src/teams/team.entity.js';
import { WebhookResolver } from '../src/webhooks/address-policy.js';
import { AuditStreamEntry } from '../src/webhooks/audit-stream-entry.entity.js';
import { WebhookDelivery } from '../src/webhooks/webhook-delivery.entity.js';
import { WebhookEndpoint } from '../src/webhooks/webhook-endpoint.entity.js';
import { WebhookSecrets } from '../src/webhooks/webhook-secrets.js';
import { WebhooksService } from '../src/webhooks/webhooks.service.js';
import { createTeam } from './factories/index.js';
import { burst, tally } from './support/burst.js';
import { startInstances, type Instances } from './support/instances.js';
import { visibleText } from './support/html.js';
import { LogCapture } from './support/log-capture.js';
import { signedInPerson, type SignedInPerson } from './support/people.js';
import { forgetPasswordConfirmation } from './support/sessions.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { createTestDatabase } from './support/test-database.js';
import { waitFor } from './support/wait-for.js';
import { WebhookReceiver } from './support/webhook-receiver.js';
import { addMember } from './factories/index.js';

const list = (teamId: number) => `/teams/${teamId}/webhooks`;
const operator = Actors.operator();

/** The signing secret a page shows once, read from its read-only field (Handlebars escapes `=`). */
const secretIn = (html: string) =>
  /value="(whsec_[^"]+)"/.exec(html)?.[1].replaceAll('&#x3D;', '=').replaceAll('&#x2F;', '/');

describe('webhook endpoints: pages, command line and address safety', () => {
  const logs = new LogCapture();
  let t: TestApp;
  let receiver: WebhookReceiver;
  let owner: SignedInPerson;
  let member: SignedInPerson;
  let stranger: SignedInPerson;
  let team: Team;

  beforeAll(async () => {
    // Only the receiver's own address is allowed of the loopback range: 127.0.0.2 and the rest
    // of it stay refused, as every private address does.
    t = await createTestApp(
      { WEBHOOK_ALLOWED_RANGES: '127.0.0.1/32', RATE_LIMIT_ENABLED: 'false', LOG_LEVEL: 'log' },
      // A file, so that the command line's own connection opens the same database.
      { logs, database: await createTestDatabase({ file: true }) },
    );
    receiver = await new WebhookReceiver().start();
    [owner, member, stranger] = await Promise.all(
      ['Owner', 'Member', 'Stranger'].map((name) => signedInPerson(t, { name })),
    );
    team = await createTeam(t.app, owner.user, 'Hooks Inc');
    await addMember(t.app, team.id, member.user, 'member');
  });
  afterAll(async () => {
    await t.close();
    await t.database.drop();
    await receiver.stop();
  });

  const endpoints = () => t.dataSource.getRepository(WebhookEndpoint);
  /** The command line on the app's database, what it prints kept. */
  const cliIo = () => {
    const out: string[] = [];
    const err: string[] = [];
    const io = {
      env: {
        NODE_ENV: 'test',
        LOG_LEVEL: 'warn',
        DATABASE_URL: t.database.url,
        SESSION_SECRET: t.config.web.sessionSecret,
        WEBHOOK_ALLOWED_RANGES: '127.0.0.1/32',
      },
      out: (line: string) => out.push(line),
      err: (line: string) => err.push(line),
    };
    return { io, out, err };
  };
  const deliveries = () => t.dataSource.getRepository(WebhookDelivery);
  const auditOf = async (event: string) => {
    await t.app.get(AuditLog).flush();
    return t.dataSource.getRepository(AuditEvent).findBy({ event, teamId: team.id });
  };

  it('should show the new endpoint its signing secret once, list it, and record the change', async () => {
    const res = await owner.client.submit(list(team.id), list(team.id), {
      url: receiver.url,
      events: ['member.role_changed', 'service_account.created'],
    });
    expect(res.status).toBe(200);
    const secret = secretIn(res.text);
    expect(secret).toMatch(/^whsec_/);
    receiver.secrets.push(secret!);
    const row = await endpoints().findOneByOrFail({ teamId: team.id });
    expect(row.events).toBe('member.role_changed,service_account.created');
    expect(row.secret).not.toContain(secret!.slice(6));

    const page = await owner.client.get(list(team.id));
    expect(page.status).toBe(200);
    expect(page.text).toContain(receiver.url);
    expect(page.text).not.toContain(secret!);
    expect(await auditOf('webhook.created')).toHaveLength(1);
  });

  it('should refuse a member (403) and anyone outside the team (404)', async () => {
    expect((await member.client.get(list(team.id))).status).toBe(403);
    expect((await stranger.client.get(list(team.id))).status).toBe(404);
    const endpoint = await endpoints().findOneByOrFail({ teamId: team.id });
    expect((await stranger.client.get(`${list(team.id)}/${endpoint.id}`)).status).toBe(404);
  });

  it('should re-render the form saying what is wrong with a bad URL or no event', async () => {
    const before = await endpoints().countBy({ teamId: team.id });
    const noEvent = await owner.client.submit(list(team.id), list(team.id), {
      url: 'https://hooks.example.com/x',
    });
    const page =
      noEvent.status === 303 ? await owner.client.get(noEvent.headers.location!) : noEvent;
    expect(page.text).toContain('Choose at least one event.');
    const notUrl = await owner.client.submit(list(team.id), list(team.id), {
      url: 'ftp://hooks.example.com/x',
      events: ['member.joined'],
    });
    const again = notUrl.status === 303 ? await owner.client.get(notUrl.headers.location!) : notUrl;
    expect(again.text).toContain('must start with https://');
    // Both mistakes at once are both said at once.
    const both = await owner.client.submit(list(team.id), list(team.id), {
      url: 'javascript:alert(1)',
    });
    const said = visibleText((await owner.client.get(both.headers.location!)).text);
    expect(said).toContain('The URL must start with https://.');
    expect(said).toContain('Choose at least one event.');
    const empty = await owner.client.submit(list(team.id), list(team.id), {
      url: '',
      events: ['member.joined'],
    });
    expect(visibleText((await owner.client.get(empty.headers.location!)).text)).toContain(
      'Give the endpoint a URL.',
    );
    // A URL whose address is refused is told with the missing events, not after them.
    const refused = await owner.client.submit(list(team.id), list(team.id), {
      url: 'https://169.254.169.254/x',
    });
    const told = (await owner.client.get(refused.headers.location!)).text;
    expect(visibleText(told)).toContain('Choose at least one event.');
    expect(visibleText(told)).toContain('The URL resolves to 169.254.169.254: a loopback, private');
    expect(told).toMatch(/id="webhook-url"[^>]*aria-invalid="true"/);
    expect(await endpoints().countBy({ teamId: team.id })).toBe(before);
  });

  it('should send a test event from the endpoint page and show it in the delivery log', async () => {
    const endpoint = await endpoints().findOneByOrFail({ teamId: team.id });
    const page = `${list(team.id)}/${endpoint.id}`;
    const res = await owner.client.submit(page, `${page}/test`);
    expect(res.status).toBe(303);
    const got = await waitFor(() => receiver.received.find((r) => r.type === 'webhook.test'), {
      message: () =>
        `${receiver.errors.join(';')} ${logs.lines.filter((l) => /Webhooks|Scheduler|Database/.test(l)).join('\n')}`,
    });
    expect(got.payload.data).toEqual({ team_id: team.id, endpoint_id: endpoint.id });
    await waitFor(
      async () => (await deliveries().findOneBy({ messageId: got.id }))?.status === 'delivered',
      { message: () => logs.lines.filter((l) => /Webhooks|Scheduler|Database/.test(l)).join('\n') },
    );
    const shown = await owner.client.get(page);
    expect(shown.text).toContain(got.id);
    expect(shown.text).toMatch(/data-status="delivered"/);
    expect(await auditOf('webhook.test_sent')).toHaveLength(1);
  });

  it('should refuse to register loopback, private, link-local and metadata addresses', async () => {
    const resolver = t.app.get(WebhookResolver);
    const spy = jest.spyOn(resolver, 'resolve').mockImplementation(async (host) =>
      host === 'localhost'
        ? [
            { address: '127.0.0.2', family: 4 },
            { address: '::1', family: 6 },
          ]
        : host === 'intranet.example.com'
          ? [{ address: '10.1.2.3', family: 4 }]
          : [{ address: '93.184.216.34', family: 4 }],
    );
    try {
      for (const url of [
        'https://127.0.0.2/hook',
        'https://localhost/hook',
        'https://[::1]/hook',
        'https://10.0.0.7/hook',
        'https://169.254.169.254/latest/meta-data',
        'https://intranet.example.com/hook',
        'https://[::ffff:10.0.0.1]/hook',
      ]) {
        await expect(
          t.app.get(WebhooksService).create(operator, team.id, { url, events: ['member.joined'] }),
        ).rejects.toMatchObject({ fields: { url: expect.stringMatching(/loopback, private/) } });
      }
      // Plain HTTP outside the allowed ranges, even to a public address.
      await expect(
        t.app.get(WebhooksService).create(operator, team.id, {
          url: 'http://hooks.example.com/x',
          events: ['member.joined'],
        }),
      ).rejects.toMatchObject({ fields: { url: 'The URL must start with https://.' } });
      // Short enough as typed, too long for its column once each letter is %XX%XX.
      await expect(
        t.app.get(WebhooksService).create(operator, team.id, {
          url: `https://hooks.example.com/${'é'.repeat(2000)}`,
          events: ['member.joined'],
        }),
      ).rejects.toMatchObject({
        fields: { url: 'The URL is longer than 2048 characters once encoded.' },
      });
      // Port 0, where nothing listens: every delivery would fail.
      await expect(
        t.app.get(WebhooksService).create(operator, team.id, {
          url: 'https://hooks.example.com:0/x',
          events: ['member.joined'],
        }),
      ).rejects.toMatchObject({ fields: { url: 'The URL must not name port 0.' } });
    } finally {
      spy.mockRestore();
    }
  });

  it('should refuse, and log, a delivery to a name that resolves to a private address by the time it is sent', async () => {
    const resolver = t.app.get(WebhookResolver);
    let answer = '93.184.216.34';
    const spy = jest
      .spyOn(resolver, 'resolve')
      .mockImplementation(async () => [{ address: answer, family: 4 }]);
    try {
      const { endpoint } = await t.app.get(WebhooksService).create(operator, team.id, {
        url: 'https://rebind.example.com/hook',
        events: ['member.joined'],
      });
      answer = '169.254.169.254';
      const messageId = await t.app.get(WebhooksService).sendTest(operator, team.id, endpoint.id);
      const row = await waitFor(async () => {
        const d = await deliveries().findOneBy({ messageId });
        return d && d.attempts === 1 && d.claimedBy === null && d;
      });
      expect(row.status).toBe('pending');
      expect(row.responseCode).toBeNull();
      expect(row.lastError).toMatch(/^refused: the URL resolves to 169\.254\.169\.254/);
      expect(logs.text).toMatch(new RegExp(`Refused to send webhook.test ${messageId}`));
      await t.app.get(WebhooksService).delete(operator, team.id, endpoint.id);
    } finally {
      spy.mockRestore();
    }
  });

  it('should not follow a redirect to a private address, and log the failure', async () => {
    const redirecting = await new WebhookReceiver().start();
    try {
      const { endpoint, secret } = await t.app
        .get(WebhooksService)
        .create(operator, team.id, { url: redirecting.url, events: ['member.joined'] });
      redirecting.secrets.push(secret);
      redirecting.answer = {
        status: 302,
        headers: { location: 'http://169.254.169.254/latest/meta-data' },
      };
      const messageId = await t.app.get(WebhooksService).sendTest(operator, team.id, endpoint.id);
      const row = await waitFor(async () => {
        const d = await deliveries().findOneBy({ messageId });
        return d && d.attempts === 1 && d.claimedBy === null && d;
      });
      expect(row).toMatchObject({ status: 'pending', responseCode: 302 });
      expect(row.lastError).toBe(
        'answered 302, a redirect to http://169.254.169.254/latest/meta-data: not followed',
      );
      expect(redirecting.received).toHaveLength(1);
      // Logged once the attempt's outcome has committed: the row can be seen a moment before.
      await waitFor(() => logs.text.includes(`Could not deliver webhook.test ${messageId}`), {
        message: () => `no "Could not deliver" line for ${messageId} in the log`,
      });
      await t.app.get(WebhooksService).delete(operator, team.id, endpoint.id);
    } finally {
      await redirecting.stop();
    }
  });

  it("should disable an endpoint that answers 410 Gone and mail the team's owners", async () => {
    const gone = await new WebhookReceiver().start();
    try {
      const { endpoint, secret } = await t.app
        .get(WebhooksService)
        .create(operator, team.id, { url: gone.url, events: ['member.joined'] });
      gone.secrets.push(secret);
      gone.answer = { status: 410 };
      const messageId = await t.app.get(WebhooksService).sendTest(operator, team.id, endpoint.id);
      await waitFor(async () => (await deliveries().findOneBy({ messageId }))?.status === 'dead');
      expect(await endpoints().findOneByOrFail({ id: endpoint.id })).toMatchObject({
        status: 'disabled',
        disabledReason: 'the endpoint answered 410 Gone',
      });
      const mail = await t.mail.waitFor({
        to: owner.email,
        subject: 'A webhook endpoint of your team was disabled',
      });
      expect(mail.text).toContain(gone.url);
      expect(await auditOf('webhook.disabled')).toHaveLength(1);
      // A disabled endpoint offers no Replay of its dead delivery; one posted (from a page shown
      // before) is refused, saying why.
      const page = `${list(team.id)}/${endpoint.id}`;
      const shown = (await owner.client.get(page)).text;
      expect(shown).toContain(messageId);
      expect(shown).not.toContain(`Replay the delivery ${messageId}`);
      // Nor is it offered a test event, which would only be dead-lettered; one posted is refused.
      expect(shown).not.toContain('Send test event');
      const test = await owner.client.submit(page, `${page}/test`);
      expect(test.status).toBe(303);
      expect(await owner.client.textOf(test.headers.location!)).toContain(
        'The endpoint is disabled: register it again before sending it a test event.',
      );
      expect(await deliveries().countBy({ endpointId: endpoint.id })).toBe(1);
      const dead = await deliveries().findOneByOrFail({ messageId });
      const replay = await owner.client.submit(page, `${page}/deliveries/${dead.id}/replay`);
      expect(replay.status).toBe(303);
      expect(await owner.client.textOf(replay.headers.location!)).toContain(
        'The endpoint is disabled: register it again before replaying its deliveries.',
      );
      expect((await deliveries().findOneByOrFail({ id: dead.id })).status).toBe('dead');
    } finally {
      await gone.stop();
    }
  });

  it('should delete the endpoint from its page and stop sending to it', async () => {
    const endpoint = await endpoints().findOneByOrFail({ teamId: team.id, url: receiver.url });
    const page = `${list(team.id)}/${endpoint.id}`;
    const res = await owner.client.submit(page, `${page}/delete`);
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(list(team.id));
    expect(await endpoints().countBy({ id: endpoint.id })).toBe(0);
    expect(await deliveries().countBy({ endpointId: endpoint.id })).toBe(0);
    expect(await auditOf('webhook.deleted')).toContainEqual(
      expect.objectContaining({
        actorKind: 'user',
        actorUserId: owner.user.id,
        targetId: endpoint.id,
      }),
    );
  });

  it('should register an endpoint from the command line and print its secret last, then list its deliveries', async () => {
    const { io, out, err } = cliIo();
    const code = await runCli(
      [
        'webhook:create',
        '--team',
        team.slug,
        '--url',
        receiver.url,
        '--events',
        'member.joined,member.removed',
      ],
      io,
    );
    expect({ code, err }).toEqual({ code: 0, err: [] });
    expect(out.at(-1)).toMatch(/^whsec_/);
    const id = Number(/endpoint (\d+)/.exec(out[0])?.[1]);
    expect(await endpoints().findOneByOrFail({ id })).toMatchObject({
      teamId: team.id,
      events: 'member.joined,member.removed',
    });
    out.length = 0;
    expect(await runCli(['webhook:deliveries', '--id', String(id)], io)).toBe(0);
    expect(out[1]).toBe('id\twebhook-id\tevent\tstatus\tattempts\tcode\tlatency_ms\tcreated');

    const refused = await runCli(
      [
        'webhook:create',
        '--team',
        team.slug,
        '--url',
        'https://10.0.0.1/x',
        '--events',
        'member.joined',
      ],
      io,
    );
    expect(refused).toBe(1);
    expect(err.join('\n')).toMatch(/loopback, private/);
    await t.app.get(Scheduler).drain();
  });

  describe('audit streams', () => {
    let ledger: Team;
    const streams = (url: string) => list(ledger.id) + url;

    beforeAll(async () => {
      ledger = await createTeam(t.app, owner.user, 'Ledger Ltd');
      await addMember(t.app, ledger.id, member.user, 'member');
    });

    it('should add an audit stream from the team page for its owners and admins, its secret shown once and its Authorization value never', async () => {
      const refused = await member.client.submit(list(ledger.id), streams('/audit-stream'), {
        url: receiver.url,
      });
      expect(refused.status).toBe(403);

      const bad = await owner.client.submit(list(ledger.id), streams('/audit-stream'), {
        url: receiver.url,
        authorization: 'Splunk tøken',
      });
      const again = bad.status === 303 ? await owner.client.get(bad.headers.location!) : bad;
      expect(again.text).toContain('The Authorization value must be printable ASCII');
      expect(again.text).toContain('id="authorization-error"');
      // Not shown back, nor kept in the session for the form shown again.
      expect(again.text).not.toContain('Splunk t');
      expect(await endpoints().countBy({ teamId: ledger.id })).toBe(0);

      const res = await owner.client.submit(list(ledger.id), streams('/audit-stream'), {
        url: receiver.url,
        authorization: 'Splunk 7c1e-hec-token',
      });
      expect(res.status).toBe(200);
      const secret = secretIn(res.text);
      expect(secret).toMatch(/^whsec_/);
      expect(res.text).not.toContain('7c1e-hec-token');
      const row = await endpoints().findOneByOrFail({ teamId: ledger.id });
      expect(row).toMatchObject({ kind: 'audit_stream', events: '', url: receiver.url });
      expect(row.authorizationHeader).not.toContain('7c1e-hec-token');
      expect(row.secret).not.toContain(secret!.slice(6));

      const page = await owner.client.get(`${list(ledger.id)}/${row.id}`);
      expect(page.status).toBe(200);
      expect(page.text).toContain('audit stream: every entry of the audit log');
      expect(page.text).not.toContain('Send test event');
      expect(page.text).not.toContain('7c1e-hec-token');
      await t.app.get(AuditLog).flush();
      const [created] = await t.dataSource
        .getRepository(AuditEvent)
        .findBy({ event: 'webhook.created', teamId: ledger.id });
      expect(JSON.parse(created.detail!)).toEqual({
        url: receiver.url,
        kind: 'audit_stream',
        authorization: 'set',
        team: 'Ledger Ltd',
      });
      await expect(
        t.app.get(WebhooksService).sendTest(operator, ledger.id, row.id),
      ).rejects.toMatchObject({ code: 'validation_failed' });
    });

    /** `audit-stream:create` for Ledger's log, with this Authorization value and standard input. */
    const createStream = async (authorization: string, stdin = '') => {
      const cli = cliIo();
      const args = ['--team', ledger.slug, '--url', receiver.url, '--authorization', authorization];
      const code = await runCli(['audit-stream:create', ...args], {
        ...cli.io,
        stdin: async () => stdin,
      });
      return { code, ...cli };
    };

    it('should register an audit stream from the command line and print its secret last', async () => {
      const { code, io, out, err } = await createStream('Splunk 9a9a-cli-token');
      expect({ code, err }).toEqual({
        code: 0,
        err: [
          "warning: --authorization given on the command line shows in the process list and the shell's history; give --authorization - and its value on standard input instead.",
        ],
      });
      expect(out[0]).toMatch(
        /^Audit stream \d+ for ledger-ltd: .* \(with an Authorization header\)$/,
      );
      expect(out.at(-1)).toMatch(/^whsec_/);
      expect(out.join('\n')).not.toContain('9a9a-cli-token');
      const id = Number(/stream (\d+)/.exec(out[0])?.[1]);
      expect(await endpoints().findOneByOrFail({ id })).toMatchObject({
        teamId: ledger.id,
        kind: 'audit_stream',
      });
      // The command line's own entry (the stream's creation) was queued for the stream by the
      // command line's write to the log, for the server to send.
      const [created] = await t.dataSource
        .getRepository(AuditEvent)
        .findBy({ event: 'webhook.created', targetId: id });
      const queued = await t.dataSource
        .getRepository(AuditStreamEntry)
        .findBy({ endpointId: id, auditEventId: created.id });
      const sent = await deliveries().findBy({ endpointId: id });
      expect(queued.length + sent.length).toBe(1);
      const operatorStream = await runCli(['audit-stream:create', '--url', receiver.url], io);
      expect(operatorStream).toBe(0);
      expect(out.at(-2)).toMatch(/for every team and account: /);
      await t.app.get(Scheduler).drain();
    });

    it('should read the Authorization value from standard input when given as -', async () => {
      const { code, out, err } = await createStream('-', 'Splunk 7b7b-stdin-token\nignored\n');
      expect({ code, err }).toEqual({ code: 0, err: [] });
      const id = Number(/stream (\d+)/.exec(out[0])?.[1]);
      const stored = await endpoints().findOneByOrFail({ id });
      expect(stored.authorizationHeader).not.toContain('7b7b');
      expect(t.app.get(WebhookSecrets).authorizationOf(stored)).toBe('Splunk 7b7b-stdin-token');

      // Standard input that gives nothing registers nothing.
      const before = await endpoints().count();
      const none = await createStream('-', '');
      expect(none.code).toBe(1);
      expect(none.err).toEqual([
        'error: --authorization - reads its value from standard input, which gave none',
      ]);
      expect(await endpoints().count()).toBe(before);
      await t.app.get(Scheduler).drain();
    });

    it('should register a stream without an Authorization header for an empty value, warning of nothing', async () => {
      const { code, out, err } = await createStream('');
      expect({ code, err }).toEqual({ code: 0, err: [] });
      expect(out[0]).not.toContain('Authorization');
      const id = Number(/stream (\d+)/.exec(out[0])?.[1]);
      expect((await endpoints().findOneByOrFail({ id })).authorizationHeader).toBeNull();
      await t.app.get(Scheduler).drain();
    });
  });
});

describe('webhooks: an audit stream added when the password is to be confirmed', () => {
  const clock = new ManualClock();
  let t: TestApp;
  let receiver: WebhookReceiver;
  let owner: SignedInPerson;
  let team: Team;

  beforeAll(async () => {
    t = await createTestApp(
      { WEBHOOK_ALLOWED_RANGES: '127.0.0.1/32', RATE_LIMIT_ENABLED: 'false' },
      { clock },
    );
    receiver = await new WebhookReceiver().start();
    owner = await signedInPerson(t, { name: 'Owner' });
    team = await createTeam(t.app, owner.user, 'Collectors Co');
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });

  it('should keep neither the Authorization value nor the form for after the password, and take the form again then', async () => {
    const streams = () => t.dataSource.getRepository(WebhookEndpoint).countBy({ teamId: team.id });
    forgetPasswordConfirmation(clock);
    const form = { url: receiver.url, authorization: 'Splunk 5ec2e7-hec-token' };
    const asked = await owner.client.submit(list(team.id), `${list(team.id)}/audit-stream`, form);
    expect(asked.status).toBe(303);
    expect(asked.headers.location).toBe(
      `/confirm-password?return_to=${encodeURIComponent(list(team.id))}`,
    );
    const sessions: { data: string }[] = await t.dataSource.query('SELECT data FROM sessions');
    expect(sessions.map((s) => s.data).join('\n')).not.toContain('5ec2e7');

    const confirmed = await owner.client.submit(asked.headers.location!, '/confirm-password', {
      password: owner.password,
      return_to: list(team.id),
    });
    expect([confirmed.status, confirmed.headers.location]).toEqual([303, list(team.id)]);
    expect(await streams()).toBe(0);

    const sent = await owner.client.submit(list(team.id), `${list(team.id)}/audit-stream`, form);
    expect(sent.status).toBe(200);
    expect(sent.text).not.toContain('5ec2e7');
    expect(await streams()).toBe(1);
  });
});

describe('webhooks: at most WEBHOOK_ENDPOINTS_PER_TEAM endpoints a team', () => {
  // Two instances on one database (a file, which the command line's connection opens too).
  let instances: Instances;
  let t: TestApp;
  let owner: SignedInPerson;
  let team: Team;

  beforeAll(async () => {
    instances = await startInstances(2, {
      WEBHOOK_ALLOWED_RANGES: '127.0.0.1/32',
      RATE_LIMIT_ENABLED: 'false',
      WEBHOOK_ENDPOINTS_PER_TEAM: '2',
    });
    t = instances.first;
    owner = await signedInPerson(t, { name: 'Owner' });
    team = await createTeam(t.app, owner.user, 'Busy Hooks');
  });
  afterAll(() => instances.close());

  const count = (teamId = team.id) =>
    t.dataSource.getRepository(WebhookEndpoint).countBy({ teamId });

  it('should count webhooks and audit streams together, refuse one more on the form keeping what was typed, and take one again after a deletion', async () => {
    const hook = { url: 'http://127.0.0.1:9/first', events: ['member.joined'] };
    expect((await owner.client.submit(list(team.id), list(team.id), hook)).status).toBe(200);
    const stream = { url: 'http://127.0.0.1:9/stream' };
    const added = await owner.client.submit(list(team.id), `${list(team.id)}/audit-stream`, stream);
    expect(added.status).toBe(200);
    expect(visibleText(added.text)).toContain('2 of at most 2 webhooks and audit streams.');

    const third = { url: 'http://127.0.0.1:9/third', events: ['member.removed'] };
    const refused = await owner.client.submit(list(team.id), list(team.id), third);
    expect([refused.status, refused.headers.location]).toEqual([303, list(team.id)]);
    const form = await owner.client.get(list(team.id));
    expect(visibleText(form.text)).toContain(
      'A team may have at most 2 webhooks and audit streams together: delete one first.',
    );
    expect(form.text).toContain('value="http://127.0.0.1:9/third"');
    expect(await count()).toBe(2);

    // The operator's command line keeps the team's limit too.
    const err: string[] = [];
    const io = {
      env: {
        NODE_ENV: 'test',
        LOG_LEVEL: 'warn',
        DATABASE_URL: t.database.url,
        SESSION_SECRET: t.config.web.sessionSecret,
        WEBHOOK_ALLOWED_RANGES: '127.0.0.1/32',
        WEBHOOK_ENDPOINTS_PER_TEAM: '2',
      },
      out: () => undefined,
      err: (line: string) => err.push(line),
    };
    const args = [
      'webhook:create',
      '--team',
      team.slug,
      '--url',
      third.url,
      '--events',
      'member.joined',
    ];
    expect(await runCli(args, io)).toBe(1);
    expect(err.join('\n')).toContain('at most 2 webhooks and audit streams');
    expect(await count()).toBe(2);

    const first = await t.dataSource
      .getRepository(WebhookEndpoint)
      .findOneByOrFail({ teamId: team.id, url: hook.url });
    const page = `${list(team.id)}/${first.id}`;
    expect((await owner.client.submit(page, `${page}/delete`)).status).toBe(303);
    expect((await owner.client.submit(list(team.id), list(team.id), third)).status).toBe(200);
    expect(await count()).toBe(2);
  });

  it('should register no more than the limit of endpoints sent at once to two instances', async () => {
    const other = await createTeam(t.app, owner.user, 'Burst Hooks');
    const [onA, onB] = owner.client.onEach(instances.servers);
    const csrf = await owner.client.csrfFrom(list(other.id));
    const answers = await burst(20, instances.servers, (i, server) =>
      (server === instances.servers[0] ? onA : onB).post(list(other.id), csrf, {
        url: `http://127.0.0.1:9/burst-${i}`,
        events: 'member.joined',
      }),
    );
    expect(tally(answers, (r) => String(r.status))).toEqual({ '200': 2, '303': 18 });
    expect(await count(other.id)).toBe(2);
    const row = await t.dataSource.getRepository(Team).findOneByOrFail({ id: other.id });
    expect(row.webhookEndpointCount).toBe(2);
  });
});
