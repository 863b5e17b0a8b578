import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * What the proxy does with traffic: forward it, reset every connection (RST), or black-hole it
 * (keep the connections open and forward nothing).
 */
export type ProxyMode = 'forward' | 'reset' | 'black-hole';

/**
 * A TCP proxy on 127.0.0.1 between the app and its database, so a test can cut the database
 * off and bring it back without touching the server.
 */
export class TcpProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private mode: ProxyMode = 'forward';
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(): Promise<this> {
    this.server = createServer((client) => {
      if (this.mode === 'reset') {
        client.on('error', () => undefined);
        client.resetAndDestroy();
        return;
      }
      const upstream = connect(this.targetPort, this.targetHost);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      this.forward(client, upstream);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  /** Drops every open connection and refuses new ones. */
  async cut(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server?.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    await closed;
  }

  async restore(): Promise<void> {
    await this.start();
  }

  async stop(): Promise<void> {
    await this.cut();
  }

  /** Resets every open connection (RST, as a crashed server or a firewall would) and each new one. */
  reset(): void {
    this.mode = 'reset';
    for (const s of this.sockets) s.resetAndDestroy();
  }

  /**
   * Forwards nothing from now on, and drops what arrives, while every connection stays open: a
   * database that froze, or a firewall that forgot the flows. Connections open now never get
   * an answer again, even after `heal()`; new ones wait for a greeting that does not come.
   */
  blackHole(): void {
    this.mode = 'black-hole';
    for (const s of this.sockets) {
      s.unpipe();
      s.on('data', () => undefined);
    }
  }

  /** Forwards new connections again (after `reset()` or `blackHole()`). */
  heal(): void {
    this.mode = 'forward';
  }

  private forward(client: Socket, upstream: Socket): void {
    if (this.mode === 'forward') {
      client.pipe(upstream).pipe(client);
      return;
    }
    for (const s of [client, upstream]) s.on('data', () => undefined);
  }
}
