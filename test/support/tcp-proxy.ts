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

/** What a FaultProxy does with connections: forward them, reset them, or swallow them. */
export type ProxyFault = 'none' | 'reset' | 'black-hole';

interface Link {
  client: Socket;
  upstream?: Socket;
  /** Black-holed: nothing is forwarded, and the upstream's end is not passed on. */
  swallowed?: boolean;
}

/**
 * A TCP proxy on 127.0.0.1 that fails the way networks do, for a client that must notice by
 * itself. `fail('reset')` answers every open connection, and every new one, with a TCP RST.
 * `fail('black-hole')` keeps connections open and forwards nothing either way, and new
 * connections are accepted and left unanswered. `heal()` forwards new connections again;
 * those black-holed stay silent, as after a network partition the client gave up on.
 */
export class FaultProxy {
  private server?: Server;
  private readonly links = new Set<Link>();
  private fault: ProxyFault = 'none';
  port = 0;

  constructor(
    private readonly targetPort: number,
    private readonly targetHost = '127.0.0.1',
  ) {}

  async start(): Promise<this> {
    this.server = createServer((client) => this.accept(client));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  fail(fault: Exclude<ProxyFault, 'none'>): void {
    this.fault = fault;
    for (const link of this.links) {
      if (fault === 'reset') this.reset(link);
      else this.swallow(link);
    }
  }

  heal(): void {
    this.fault = 'none';
  }

  async stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server?.close(() => resolve()));
    for (const link of this.links) this.reset(link);
    await closed;
  }

  private accept(client: Socket): void {
    client.on('error', () => client.destroy());
    if (this.fault === 'reset') {
      client.resetAndDestroy();
      return;
    }
    const link: Link = { client };
    this.links.add(link);
    client.on('close', () => {
      this.links.delete(link);
      link.upstream?.destroy();
    });
    if (this.fault === 'black-hole') {
      this.swallow(link);
      return;
    }
    const upstream = connect(this.targetPort, this.targetHost);
    link.upstream = upstream;
    upstream.on('error', () => upstream.destroy());
    upstream.on('close', () => {
      if (!link.swallowed) client.destroy();
    });
    client.pipe(upstream).pipe(client);
  }

  /**
   * A socket already ending closes by itself: destroying it while its end is still being sent
   * left its handle open in Node 24, and the test process with it.
   */
  private reset(link: Link): void {
    if (link.client.writable) link.client.resetAndDestroy();
    if (link.upstream?.writable) link.upstream.destroy();
  }

  /** Reads what the client sends and forwards none of it, its connection kept open. */
  private swallow(link: Link): void {
    link.swallowed = true;
    if (link.upstream) {
      link.client.unpipe(link.upstream);
      link.upstream.unpipe(link.client);
      link.upstream.destroy();
    }
    link.client.on('data', () => {});
  }
}
