import { createServer, connect, type Server, type Socket } from 'node:net';

const COMMIT_QUERY = Buffer.from('\x03COMMIT', 'latin1');

/** What the proxy does with connections: forward them, reset them, or swallow them. */
export type ProxyFault = 'none' | 'reset' | 'black-hole';

interface Link {
  client: Socket;
  upstream?: Socket;
  /** Black-holed: nothing is forwarded, and the upstream's end is not passed on. */
  swallowed?: boolean;
  /** Held: what the client sends waits here, to reach the server later, its client gone or not. */
  held?: Buffer[];
}

/**
 * A TCP proxy on 127.0.0.1 between the app and its database or Redis, failing the way networks
 * do, for a client that must notice by itself.
 * - `cut()` drops every connection and refuses new ones (a server that went away); `restore()`
 *   listens again on the same port.
 * - `fail('reset')` answers every open connection, and every new one, with a TCP RST (a crashed
 *   server, a firewall).
 * - `fail('black-hole')` keeps connections open and forwards nothing either way, and new
 *   connections are accepted and left unanswered (a frozen server, a firewall that forgot the
 *   flows).
 * - `heal()` forwards new connections again; those black-holed stay silent, as after a network
 *   partition the client gave up on.
 * - `hold()` keeps what the open connections send from the server until `deliverHeld()`, then
 *   sends it on, in the order they were held, even for a client that gave up and closed
 *   meanwhile: a server too busy to read its connections, which runs their commands late. New
 *   connections are forwarded as usual, or held too with `{ newConnections: true }`.
 * - `loseCommitAnswerAfter(statement)` lets through the next MySQL `COMMIT` of a connection that
 *   sent `statement` (a text in it) and, once the server answers it, resets that connection
 *   instead of passing the answer on: a change that was made, whose client never learns it. Other
 *   connections' commits (the app's background work) pass as usual.
 */
export class TcpProxy {
  private server?: Server;
  private readonly links = new Set<Link>();
  /** Links whose client's data is held, until delivered, in the order they were held. */
  private readonly holding = new Set<Link>();
  /** Whether new connections are held too. */
  private holdingNew = false;
  private fault: ProxyFault = 'none';
  /** What a connection must have sent for its next COMMIT's answer to be lost. */
  private commitFault?: Buffer;
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(): Promise<this> {
    this.server = createServer((client) => this.accept(client));
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
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

  hold({ newConnections = false } = {}): void {
    this.holdingNew = newConnections;
    for (const link of this.links) this.holdLink(link);
  }

  private holdLink(link: Link): void {
    if (!link.upstream || link.swallowed || link.held) return;
    const held: Buffer[] = [];
    link.held = held;
    link.client.unpipe(link.upstream);
    link.client.on('data', (chunk: Buffer) => held.push(chunk));
    // Unpiped from its last destination, the client was paused: it is read on.
    link.client.resume();
    this.holding.add(link);
  }

  /**
   * Sends what was held on to the server. A connection whose client has gone then ends: the
   * promise resolves once the server has closed each of those, having read what they held.
   */
  deliverHeld(): Promise<void> {
    this.holdingNew = false;
    const ended: Promise<void>[] = [];
    for (const link of this.holding) {
      const { upstream, held = [] } = link;
      link.held = undefined;
      if (!upstream) continue;
      for (const chunk of held) upstream.write(chunk);
      if (link.client.destroyed) {
        if (upstream.destroyed) continue;
        ended.push(new Promise((resolve) => upstream.once('close', () => resolve())));
        // Its answers go nowhere, but are read, so that the server's end is seen.
        upstream.unpipe();
        upstream.resume();
        upstream.end();
      } else {
        link.client.pipe(upstream);
      }
    }
    this.holding.clear();
    return Promise.all(ended).then(() => undefined);
  }

  loseCommitAnswerAfter(statement: string): void {
    this.commitFault = Buffer.from(statement, 'utf8');
  }

  /** Drops every open connection and refuses new ones until `restore()`. */
  async cut(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server?.close(() => resolve()));
    for (const link of this.links) this.reset(link);
    await closed;
  }

  async restore(): Promise<void> {
    this.fault = 'none';
    await this.start();
  }

  async stop(): Promise<void> {
    for (const link of this.holding) link.upstream?.destroy();
    this.holding.clear();
    await this.cut();
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
      // Held data still goes to the server (deliverHeld), on this connection.
      if (!link.held) link.upstream?.destroy();
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
    if (this.holdingNew) this.holdLink(link);
    let sentStatement = false;
    client.on('data', (chunk: Buffer) => {
      const fault = this.commitFault;
      if (!fault) return;
      if (chunk.includes(fault)) sentStatement = true;
      // A COM_QUERY packet (0x03) whose text is COMMIT: its answer is the next the server sends.
      if (!sentStatement || !chunk.includes(COMMIT_QUERY)) return;
      this.commitFault = undefined;
      upstream.unpipe(client);
      upstream.once('data', () => this.reset(link));
    });
  }

  /**
   * A socket already ending closes by itself: destroying it while its end is still being sent
   * left its handle open in Node 24, and the test process with it.
   */
  private reset(link: Link): void {
    if (link.client.writable) link.client.resetAndDestroy();
    else link.client.destroy();
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
