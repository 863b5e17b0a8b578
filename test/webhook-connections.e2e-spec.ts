import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { ManualClock } from '../src/clock/clock.js';
import { Actors } from '../src/common/actor.js';
import type { Team } from '../src/teams/team.entity.js';
import { WebhookResolver } from '../src/webhooks/address-policy.js';
import { WebhookDelivery } from '../src/webhooks/webhook-delivery.entity.js';
import type { WebhookEndpoint } from '../src/webhooks/webhook-endpoint.entity.js';
import { EXCERPT_CHARS } from '../src/webhooks/webhook-http.js';
import { RETRY_DELAYS_MS } from '../src/webhooks/retry-schedule.js';
import { WebhookSender } from '../src/webhooks/webhook-sender.js';
import { WebhooksService } from '../src/webhooks/webhooks.service.js';
import { createTeam, createUser } from './factories/index.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { createTestApp, type TestApp } from './support/test-app.js';
import { selfSignedCertificate } from './support/tls-certificate.js';
import { waitFor } from './support/wait-for.js';
import { attempted } from './support/webhook-deliveries.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

const operator = Actors.operator();
const NAME = 'hooks.example.test';
const OTHER = 'other.example.test';

/**
 * An endpoint's deliveries share a kept connection, and the address rules hold as they do for
 * a new one: the pool is keyed by the address the policy accepted at each send. Time stands
 * still for the app (a refused delivery's retry never comes due); connections are kept longer
 * than any spec waits between two deliveries.
 */
describe('webhooks: the connections deliveries are sent on', () => {
  const clock = new ManualClock(Date.parse('2026-11-20T09:00:00Z'));
  let t: TestApp;
  let first: WebhookReceiver;
  let second: WebhookReceiver;
  let team: Team;
  let endpoint: WebhookEndpoint;
  /** What the endpoint's name resolves to, for the next send. */
  let resolvesTo = '127.0.0.1';

  beforeAll(async () => {
    t = await createTestApp(
      {
        WEBHOOK_ALLOWED_RANGES: '127.0.0.1/32,127.0.0.2/32',
        WEBHOOK_KEEP_ALIVE_MS: '60000',
        // A black-holed connection is given up on in seconds (machine time), long enough that
        // the receivers' answers are never late on a busy machine.
        WEBHOOK_TIMEOUT_MS: '3000',
        RATE_LIMIT_ENABLED: 'false',
      },
      { clock },
    );
    jest
      .spyOn(t.app.get(WebhookResolver), 'resolve')
      .mockImplementation(async (host) =>
        host === NAME || host === OTHER ? [{ address: resolvesTo, family: 4 }] : [],
      );
    // One port on two addresses: the name may resolve to either.
    first = await new WebhookReceiver(clock).start('127.0.0.1');
    second = await new WebhookReceiver(clock).start('127.0.0.2', first.port);
    team = await createTeam(t.app, await createUser(t.app), 'Kept Connections');
    const created = await t.app.get(WebhooksService).create(operator, team.id, {
      url: `http://${NAME}:${first.port}/hook`,
      events: ['member.joined'],
    });
    endpoint = created.endpoint;
    first.secrets.push(created.secret);
    second.secrets.push(created.secret);
  });
  afterEach(() => {
    resolvesTo = '127.0.0.1';
    first.answer = { status: 200 };
  });
  afterAll(async () => {
    await t.close();
    await first.stop();
    await second.stop();
  });

  /** A test event, once its attempt has been made and let go. */
  const tested = async (): Promise<WebhookDelivery> => {
    const messageId = await t.app.get(WebhooksService).sendTest(operator, team.id, endpoint.id);
    return attempted(t.dataSource, messageId);
  };

  it("should send an endpoint's deliveries over one kept connection, naming the endpoint's host", async () => {
    const before = first.connections;
    for (let i = 0; i < 3; i++) expect(await tested()).toMatchObject({ status: 'delivered' });
    expect(first.connections - before).toBe(1);
    expect(first.received).toHaveLength(3);
    expect(new Set(first.hosts)).toEqual(new Set([`${NAME}:${first.port}`]));
  });

  it('should keep the connections of two names on one address apart', async () => {
    const receiver = await new WebhookReceiver(clock).start();
    const ids: number[] = [];
    try {
      for (const host of [NAME, OTHER]) {
        const { endpoint: created, secret } = await t.app
          .get(WebhooksService)
          .create(operator, team.id, {
            url: `http://${host}:${receiver.port}/hook`,
            events: ['member.joined'],
          });
        receiver.secrets.push(secret);
        ids.push(created.id);
      }
      for (const id of [...ids, ...ids]) {
        const messageId = await t.app.get(WebhooksService).sendTest(operator, team.id, id);
        expect(await attempted(t.dataSource, messageId)).toMatchObject({ status: 'delivered' });
      }
      expect(receiver.hosts).toEqual(
        [NAME, OTHER, NAME, OTHER].map((host) => `${host}:${receiver.port}`),
      );
      expect(receiver.connections).toBe(2);
    } finally {
      for (const id of ids) await t.app.get(WebhooksService).delete(operator, team.id, id);
      await receiver.stop();
    }
  });

  it('should connect anew when the name resolves elsewhere, and send nothing once it resolves to a refused address', async () => {
    await tested();
    const [atFirst, firstConnections] = [first.received.length, first.connections];

    resolvesTo = '127.0.0.2';
    expect(await tested()).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(second.received).toHaveLength(1);
    expect(second.connections).toBe(1);
    expect(second.hosts).toEqual([`${NAME}:${first.port}`]);

    // Both addresses have a kept connection; neither is used for an address the rules refuse.
    resolvesTo = '10.0.0.1';
    const refused = await tested();
    expect(refused).toMatchObject({ status: 'pending', responseCode: null });
    expect(refused.lastError).toMatch(/^refused: the URL resolves to 10\.0\.0\.1/);
    expect(first.received).toHaveLength(atFirst);
    expect(second.received).toHaveLength(1);
    expect(first.connections).toBe(firstConnections);
  });

  it('should send again on a new connection when the receiver had closed the kept one', async () => {
    await tested();
    const [received, connections] = [first.received.length, first.connections];
    first.resetNextReused = true;

    expect(await tested()).toMatchObject({ status: 'delivered', attempts: 1, responseCode: 200 });
    expect(first.resetNextReused).toBe(false);
    expect(first.received).toHaveLength(received + 1);
    expect(first.connections).toBe(connections + 1);
  });

  it('should keep the first characters of a long answer and close its connection, not read it all', async () => {
    await tested();
    const connections = first.connections;
    first.answer = { status: 200, body: 'x'.repeat(1_000_000) };

    const long = await tested();
    expect(long).toMatchObject({ status: 'delivered', responseCode: 200 });
    expect(long.responseExcerpt).toBe('x'.repeat(EXCERPT_CHARS));
    first.answer = { status: 200 };
    expect(await tested()).toMatchObject({ status: 'delivered' });
    expect(first.connections).toBe(connections + 1);
  });

  it('should give up on a kept connection that went silent or was reset, and deliver each event once on a new one', async () => {
    const proxy = await new TcpProxy('127.0.0.1', first.port).start();
    const { endpoint: proxied, secret } = await t.app
      .get(WebhooksService)
      .create(operator, team.id, {
        url: `http://127.0.0.1:${proxy.port}/hook`,
        events: ['member.joined'],
      });
    first.secrets.push(secret);
    const send = async () =>
      attempted(
        t.dataSource,
        await t.app.get(WebhooksService).sendTest(operator, team.id, proxied.id),
      );
    /** The delivery's retry, once it is due and the sender has looked. */
    const retried = async (id: number) => {
      clock.advance(RETRY_DELAYS_MS[0]);
      t.app.get(WebhookSender).wake();
      return waitFor(async () => {
        const row = await t.dataSource.getRepository(WebhookDelivery).findOneByOrFail({ id });
        return row.attempts === 2 && row.claimedBy === null && row;
      });
    };
    try {
      expect(await send()).toMatchObject({ status: 'delivered' });

      // The kept connection forwards nothing any more: the attempt times out.
      proxy.fail('black-hole');
      const silent = await send();
      expect(silent).toMatchObject({ status: 'pending', lastError: 'no answer in time' });
      proxy.heal();
      expect(await retried(silent.id)).toMatchObject({ status: 'delivered' });

      // The kept connection is reset, and so is every new one while the fault lasts.
      proxy.fail('reset');
      const reset = await send();
      expect(reset).toMatchObject({ status: 'pending', responseCode: null });
      expect(reset.lastError).toMatch(/ECONNRESET/);
      proxy.heal();
      expect(await retried(reset.id)).toMatchObject({ status: 'delivered' });

      const counts = first.countsById();
      expect([silent.messageId, reset.messageId].map((id) => counts.get(id))).toEqual([1, 1]);
    } finally {
      await t.app.get(WebhooksService).delete(operator, team.id, proxied.id);
      await proxy.stop();
    }
  });

  describe('over TLS', () => {
    const trusted = getCACertificates('default');
    const forName = selfSignedCertificate(NAME);
    const forOther = selfSignedCertificate(OTHER);
    const forAddress = selfSignedCertificate('127.0.0.1');
    // The certificates are trusted by this process, as a public authority's would be: what is
    // checked is the name.
    beforeAll(() =>
      setDefaultCACertificates([...trusted, forName.cert, forOther.cert, forAddress.cert]),
    );
    afterAll(() => setDefaultCACertificates(trusted));

    /** An endpoint at https://`host` on a receiver with `certificate`, and its test event's delivery. */
    const over = async (certificate: typeof forName, host = NAME) => {
      const receiver = await new WebhookReceiver(clock).start('127.0.0.1', 0, certificate);
      try {
        const created = await t.app.get(WebhooksService).create(operator, team.id, {
          url: `https://${host}:${receiver.port}/hook`,
          events: ['member.joined'],
        });
        receiver.secrets.push(created.secret);
        const messageId = await t.app
          .get(WebhooksService)
          .sendTest(operator, team.id, created.endpoint.id);
        const delivery = await attempted(t.dataSource, messageId);
        await t.app.get(WebhooksService).delete(operator, team.id, created.endpoint.id);
        return { delivery, receiver };
      } finally {
        await receiver.stop();
      }
    };

    it("should connect to the checked address and ask for the endpoint's name (SNI and Host)", async () => {
      const { delivery, receiver } = await over(forName);
      expect(delivery).toMatchObject({ status: 'delivered', responseCode: 200 });
      expect(receiver.received).toHaveLength(1);
      expect(receiver.serverNames).toEqual([NAME]);
      expect(receiver.hosts).toEqual([`${NAME}:${receiver.port}`]);
    });

    it('should refuse a certificate for another name, though the address is the checked one', async () => {
      const { delivery, receiver } = await over(forOther);
      expect(delivery).toMatchObject({ status: 'pending', responseCode: null });
      expect(delivery.lastError).toMatch(/ERR_TLS_CERT_ALTNAME_INVALID/);
      expect(receiver.received).toHaveLength(0);
    });

    it("should check an address URL's certificate against that address, and ask for no name", async () => {
      const { delivery, receiver } = await over(forAddress, '127.0.0.1');
      expect(delivery).toMatchObject({ status: 'delivered', responseCode: 200 });
      expect(receiver.serverNames).toEqual([false]);
      const named = await over(forName, '127.0.0.1');
      expect(named.delivery.lastError).toMatch(/ERR_TLS_CERT_ALTNAME_INVALID/);
      expect(named.receiver.received).toHaveLength(0);
    });
  });
});

describe('webhooks: with WEBHOOK_KEEP_ALIVE_MS=0', () => {
  it('should send each delivery on a new connection', async () => {
    const t = await createTestApp({
      WEBHOOK_ALLOWED_RANGES: '127.0.0.1/32',
      WEBHOOK_KEEP_ALIVE_MS: '0',
      RATE_LIMIT_ENABLED: 'false',
    });
    const receiver = await new WebhookReceiver().start();
    try {
      const team = await createTeam(t.app, await createUser(t.app), 'New Connections');
      const { endpoint, secret } = await t.app
        .get(WebhooksService)
        .create(operator, team.id, { url: receiver.url, events: ['member.joined'] });
      receiver.secrets.push(secret);
      for (let i = 0; i < 2; i++) {
        const messageId = await t.app.get(WebhooksService).sendTest(operator, team.id, endpoint.id);
        expect(await attempted(t.dataSource, messageId)).toMatchObject({ status: 'delivered' });
      }
      expect(receiver.received).toHaveLength(2);
      expect(receiver.connections).toBe(2);
    } finally {
      await t.close();
      await receiver.stop();
    }
  });
});
