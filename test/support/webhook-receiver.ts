import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { Clock } from '../../src/clock/clock.js';

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
  answer: { status: number; headers?: Record<string, string>; body?: string } = { status: 200 };
  port = 0;

  /** `clock`: the deployment's, whose times the signatures carry (a spec's ManualClock). */
  constructor(private readonly clock?: Clock) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
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
        res.writeHead(payload ? this.answer.status : 400, this.answer.headers ?? {});
        res.end(payload ? (this.answer.body ?? 'ok') : 'bad signature');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
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
