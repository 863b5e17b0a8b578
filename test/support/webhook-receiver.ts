import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { Webhook } from 'standardwebhooks';
import type { Clock } from '../../src/clock/clock.js';
import type { TlsCertificate } from './tls-certificate.js';

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

export interface Received {
  id: string;
  type: string;
  payload: Record<string, unknown>;
  headers: IncomingHttpHeaders;
}

/**
 * A webhook receiver on 127.0.0.1 that checks every request with the `standardwebhooks`
 * package (Standard Webhooks' reference library, not Tessera's code), keeps what verified and
 * counts what did not. `answer` says what it replies (200 unless a spec changes it).
 */
export class WebhookReceiver {
  private server?: Server;
  readonly received: Received[] = [];
  readonly rejected: string[] = [];
  /** Why the library refused each secret it was given, for a failing spec's message. */
  readonly errors: string[] = [];
  secrets: string[] = [];
  answer: Answer = { status: 200 };
  /** Answers given before `answer`, one a request, in the order requests arrive. */
  readonly nextAnswers: Answer[] = [];
  /** While set, every answer waits for it. */
  holding: Promise<void> | null = null;
  /** Connections accepted, and the Host header of each request. */
  connections = 0;
  readonly hosts: string[] = [];
  /** Over TLS: the name each request's client asked for (SNI). */
  readonly serverNames: (string | false | null)[] = [];
  /** Resets the next request that comes on a connection used before, as a server that closed it idle. */
  resetNextReused = false;
  port = 0;
  private host = '127.0.0.1';
  private tls?: TlsCertificate;

  /** `clock`: the deployment's, whose times the signatures carry (a spec's ManualClock). */
  constructor(private readonly clock?: Clock) {}

  get url(): string {
    return `${this.tls ? 'https' : 'http'}://${this.host}:${this.port}/hook`;
  }

  /**
   * Listens on `host` (127.0.0.1 unless told), on `port` (any free one unless told), over TLS
   * with `tls`'s key and certificate when given.
   */
  async start(host = '127.0.0.1', port = 0, tls?: TlsCertificate): Promise<this> {
    this.host = host;
    this.tls = tls;
    const served = new WeakSet<object>();
    this.server = (tls ? createTlsServer.bind(null, tls) : createServer)((req, res) => {
      this.hosts.push(String(req.headers.host));
      if (tls) this.serverNames.push((req.socket as TLSSocket).servername);
      if (served.has(req.socket) && this.resetNextReused) {
        this.resetNextReused = false;
        req.socket.resetAndDestroy();
        return;
      }
      served.add(req.socket);
      const answer = this.nextAnswers.shift() ?? this.answer;
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        await this.holding;
        const body = Buffer.concat(chunks).toString('utf8');
        const payload = this.verify(body, req.headers);
        if (payload) {
          this.received.push({
            id: String(req.headers['webhook-id']),
            type: String(payload.type),
            payload,
            headers: req.headers,
          });
        }
        res.writeHead(payload ? answer.status : 400, answer.headers ?? {});
        res.end(payload ? (answer.body ?? 'ok') : 'bad signature');
      });
    });
    // Idle connections are kept for as long as any spec takes between two deliveries.
    this.server.keepAliveTimeout = 120_000;
    this.server.on('connection', () => this.connections++);
    await new Promise<void>((resolve) => this.server!.listen(port, host, resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** The payload when one of the secrets verifies the request; null otherwise. */
  private verify(body: string, headers: IncomingHttpHeaders): Record<string, unknown> | null {
    const flat = Object.fromEntries(
      Object.entries(headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : String(v)]),
    );
    // The library checks the timestamp against Date.now(): the deployment's clock stands in
    // for it during the (synchronous) check.
    const realNow = Date.now;
    if (this.clock) Date.now = () => this.clock!.nowMs();
    try {
      for (const secret of this.secrets) {
        try {
          return new Webhook(secret).verify(body, flat) as Record<string, unknown>;
        } catch (error) {
          this.errors.push(String(error));
        }
      }
    } finally {
      Date.now = realNow;
    }
    this.rejected.push(String(headers['webhook-id']));
    return null;
  }

  /** How many times each webhook-id arrived. */
  countsById(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const r of this.received) counts.set(r.id, (counts.get(r.id) ?? 0) + 1);
    return counts;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) =>
      this.server ? this.server.close(() => resolve()) : resolve(),
    );
  }
}
