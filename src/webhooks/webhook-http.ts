import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import {
  Agent as HttpAgent,
  request as httpRequest,
  type ClientRequestArgs,
  type IncomingMessage,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from 'node:https';
import { isIP } from 'node:net';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { AddressPolicy, RefusedAddressError, type ResolvedAddress } from './address-policy.js';

/** How much of an answer's body is kept: the rest is never read into memory. */
export const EXCERPT_CHARS = 500;

export interface HttpOutcome {
  /** The answer's status; null when none came (refused, timed out, not allowed). */
  status: number | null;
  latencyMs: number;
  excerpt: string | null;
  /** Why it failed, in a line; null for a 2xx answer. */
  error: string | null;
  /** The address was refused (SSRF): nothing was sent. */
  refused: boolean;
}

/**
 * POSTs a webhook with Node's own http/https: to the address the policy accepted (the socket
 * connects to that address, whatever the name resolves to by then), with no redirect followed,
 * a timeout on the whole exchange, and at most EXCERPT_CHARS of the answer read.
 *
 * A connection is kept for the next delivery to the same endpoint: at most one idle connection
 * per accepted address and URL host (name and port), closed after WEBHOOK_KEEP_ALIVE_MS (none
 * kept at 0). A name that resolves elsewhere gets a new connection to an address checked anew,
 * and two names on one address never share one; an answer longer than the excerpt closes its
 * connection instead of being read to its end.
 */
@Injectable()
export class WebhookHttp implements OnModuleDestroy {
  private readonly agents: { 'http:': EndpointHttpAgent; 'https:': EndpointHttpsAgent };

  constructor(
    private readonly policy: AddressPolicy,
    @Inject(CONFIG) private readonly config: Config,
  ) {
    const keptMs = config.webhooks.keepAliveMs;
    const pool = {
      keepAlive: keptMs > 0,
      maxFreeSockets: 1,
      timeout: keptMs,
      scheduling: 'lifo',
    } as const;
    this.agents = { 'http:': new EndpointHttpAgent(pool), 'https:': new EndpointHttpsAgent(pool) };
  }

  onModuleDestroy(): void {
    for (const agent of Object.values(this.agents)) agent.destroy();
  }

  async post(rawUrl: string, headers: Record<string, string>, body: string): Promise<HttpOutcome> {
    const started = performance.now();
    const elapsed = (): number => Math.round(performance.now() - started);
    let target: ResolvedAddress;
    let url: URL;
    try {
      url = this.policy.parse(rawUrl);
      target = await this.policy.addressFor(url);
    } catch (error) {
      if (!(error instanceof RefusedAddressError)) throw error;
      return {
        status: null,
        latencyMs: elapsed(),
        excerpt: null,
        error: `refused: the URL ${error.message}`,
        refused: true,
      };
    }
    try {
      const res = await this.send(url, target, headers, body);
      const excerpt = await readExcerpt(res);
      const status = res.statusCode ?? 0;
      const ok = status >= 200 && status < 300;
      const location = res.headers.location;
      const error = ok
        ? null
        : status >= 300 && status < 400
          ? `answered ${status}, a redirect${location ? ` to ${location.slice(0, 200)}` : ''}: not followed`
          : `answered ${status}`;
      return { status, latencyMs: elapsed(), excerpt, error, refused: false };
    } catch (error) {
      return {
        status: null,
        latencyMs: elapsed(),
        excerpt: null,
        error: describe(error),
        refused: false,
      };
    }
  }

  /**
   * Sends once; again, on a connection of its own, when a kept one turns out to have been closed
   * by the receiver meanwhile (Node's documented way: `reusedSocket` and ECONNRESET).
   */
  private async send(
    url: URL,
    target: ResolvedAddress,
    headers: Record<string, string>,
    body: string,
  ): Promise<IncomingMessage> {
    const signal = AbortSignal.timeout(this.config.webhooks.timeoutMs);
    try {
      return await this.sendOnce(url, target, headers, body, signal, true);
    } catch (error) {
      if (!(error instanceof StaleConnectionError)) throw error;
      return this.sendOnce(url, target, headers, body, signal, false);
    }
  }

  private sendOnce(
    url: URL,
    target: ResolvedAddress,
    headers: Record<string, string>,
    body: string,
    signal: AbortSignal,
    pooled: boolean,
  ): Promise<IncomingMessage> {
    const secure = url.protocol === 'https:';
    const name = url.hostname.replace(/^\[(.*)\]$/, '$1');
    // The socket connects to the accepted address; the name goes in the Host header and the TLS
    // handshake (SNI and the certificate's check).
    const options: RequestOptions & PoolName = {
      protocol: url.protocol,
      host: target.address,
      family: target.family,
      port: url.port || (secure ? 443 : 80),
      path: `${url.pathname}${url.search}`,
      ...(secure && !isIP(name) ? { servername: name } : {}),
      method: 'POST',
      agent: pooled ? this.agents[secure ? 'https:' : 'http:'] : false,
      endpointHost: url.host,
      headers: {
        host: url.host,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': 'Tessera-Webhooks/1',
        ...headers,
      },
      signal,
    };
    return new Promise((resolve, reject) => {
      const req = (secure ? httpsRequest : httpRequest)(options);
      req.on('response', resolve);
      req.on('error', (error: NodeJS.ErrnoException) =>
        reject(
          req.reusedSocket && error.code === 'ECONNRESET' && !signal.aborted
            ? new StaleConnectionError()
            : error,
        ),
      );
      req.end(body);
    });
  }
}

/**
 * A kept connection the receiver had closed, as it may once idle: the request almost surely went
 * nowhere, and a receiver that did get it tells the second by its `webhook-id`.
 */
class StaleConnectionError extends Error {
  readonly code = 'ECONNRESET';
  constructor() {
    super('the kept connection was closed by the receiver');
  }
}

/** The URL's host (name and port), which Node's pool leaves out of a connection's name. */
interface PoolName {
  endpointHost?: string;
}

/**
 * Node names a pooled connection by address and port (and, over TLS, the server name): the
 * endpoint's host is added, so that two names on one address keep apart.
 */
class EndpointHttpAgent extends HttpAgent {
  override getName(options?: ClientRequestArgs & PoolName): string {
    return `${super.getName(options)}|${options?.endpointHost ?? ''}`;
  }
}

class EndpointHttpsAgent extends HttpsAgent {
  override getName(options?: RequestOptions & PoolName): string {
    return `${super.getName(options)}|${options?.endpointHost ?? ''}`;
  }
}

/**
 * The answer's first EXCERPT_CHARS characters. An answer that ends within them leaves its
 * connection to the pool; a longer one is cut off, its connection closed.
 */
function readExcerpt(res: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const done = (): void => resolve(text.slice(0, EXCERPT_CHARS));
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      text += chunk;
      if (text.length > EXCERPT_CHARS) {
        res.destroy();
        done();
      }
    });
    res.on('end', done);
    res.on('error', done);
    res.on('close', done);
  });
}

function describe(error: unknown): string {
  const e = error as { name?: string; code?: string; message?: string };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'no answer in time';
  return `${e.code ?? 'failed'}: ${String(e.message ?? error)}`.replace(/\s+/g, ' ').slice(0, 300);
}
