import { Inject, Injectable } from '@nestjs/common';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
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
 * a timeout on the whole exchange, no connection reuse, and at most EXCERPT_CHARS of the answer
 * read.
 */
@Injectable()
export class WebhookHttp {
  constructor(
    private readonly policy: AddressPolicy,
    @Inject(CONFIG) private readonly config: Config,
  ) {}

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

  private send(
    url: URL,
    target: ResolvedAddress,
    headers: Record<string, string>,
    body: string,
  ): Promise<IncomingMessage> {
    // The name is kept for the Host header and TLS (SNI, the certificate's check); the socket
    // connects to the accepted address alone.
    const lookup: LookupFunction = (_host, options, callback) => {
      if (options.all) callback(null, [target]);
      else callback(null, target.address, target.family);
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(url, {
        method: 'POST',
        agent: false,
        lookup,
        headers: {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': 'Tessera-Webhooks/1',
          ...headers,
        },
        signal: AbortSignal.timeout(this.config.webhooks.timeoutMs),
      });
      req.on('response', resolve);
      req.on('error', reject);
      req.end(body);
    });
  }
}

function readExcerpt(res: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const done = (): void => {
      res.destroy();
      resolve(text.slice(0, EXCERPT_CHARS));
    };
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      text += chunk;
      if (text.length >= EXCERPT_CHARS) done();
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
