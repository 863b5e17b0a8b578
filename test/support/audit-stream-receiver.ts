import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedBatch {
  id: string;
  /** Each line of the body, parsed. */
  lines: Record<string, unknown>[];
  headers: IncomingHttpHeaders;
}

/**
 * A collector of audit streams on 127.0.0.1: every request's signature is checked with the
 * `standardwebhooks` package (its `sign`, over the body as received: its `verify` reads a body of
 * one JSON object, not JSON lines), what verified is kept as batches of lines, the rest is
 * refused and counted. `status` is what it answers (200 unless a spec changes it).
 */
export class AuditStreamReceiver {
  private server?: Server;
  readonly batches: ReceivedBatch[] = [];
  readonly rejected: string[] = [];
  /** How many signed requests came with each webhook-id, whatever was answered. */
  readonly tries = new Map<string, number>();
  secrets: string[] = [];
  status = 200;
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/collector`;
  }

  /** Every line received, in the order received. */
  get lines(): Record<string, unknown>[] {
    return this.batches.flatMap((b) => b.lines);
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const id = String(req.headers['webhook-id']);
        if (!this.verifies(body, req.headers)) {
          this.rejected.push(id);
          res.writeHead(400).end('bad signature');
          return;
        }
        this.tries.set(id, (this.tries.get(id) ?? 0) + 1);
        if (this.status >= 200 && this.status < 300) {
          const lines = body
            .split('\n')
            .filter((l) => l !== '')
            .map((l) => JSON.parse(l) as Record<string, unknown>);
          this.batches.push({ id, lines, headers: req.headers });
        }
        res.writeHead(this.status).end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  private verifies(body: string, headers: IncomingHttpHeaders): boolean {
    const id = String(headers['webhook-id']);
    const timestamp = Number(headers['webhook-timestamp']);
    const sent = String(headers['webhook-signature'] ?? '').split(' ');
    return this.secrets.some((secret) =>
      sent.includes(new Webhook(secret).sign(id, new Date(timestamp * 1000), body)),
    );
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) =>
      this.server ? this.server.close(() => resolve()) : resolve(),
    );
  }
}
