import { simpleParser } from 'mailparser';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { track } from './leftovers.js';
import { WAIT_TIMEOUT_MS, waitFor } from './wait-for.js';

/** A message as the SMTP server received it. */
export interface ReceivedMail {
  /** The envelope's recipients, lower-cased. */
  to: string[];
  from: string;
  subject: string;
  text: string;
  html: string;
  /** Every http(s) link in the text body, in order. */
  links: string[];
  /** The whole message as it came over the wire. */
  raw: string;
}

type Match = { to?: string; subject?: RegExp | string };

const LINK = /https?:\/\/[^\s<>"]+/g;

/**
 * A real SMTP server on 127.0.0.1 for the e2e specs: the app sends to it over MAIL_URL as it
 * would to any mail server. It can be stopped and started again on the same port, refuse
 * messages for a while (`refuseWith`), and ask for credentials.
 */
export class TestSmtpServer {
  readonly received: ReceivedMail[] = [];
  private server?: SMTPServer;
  private port = 0;
  private refusal?: { code: number; message: string };
  private delayMs = 0;
  /** While set, every answer waits for it (`hold`). */
  private held?: Promise<void>;
  /** Messages whose data has arrived and that have not been answered yet. */
  receiving = 0;
  private forget?: () => void;

  private constructor(private readonly credentials?: { user: string; pass: string }) {}

  static async start(options: { auth?: { user: string; pass: string } } = {}) {
    const server = new TestSmtpServer(options.auth);
    await server.listen();
    return server;
  }

  /** What MAIL_URL should say to send here. */
  get url(): string {
    const auth = this.credentials
      ? `${encodeURIComponent(this.credentials.user)}:${encodeURIComponent(this.credentials.pass)}@`
      : '';
    return `smtp://${auth}127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.server !== undefined;
  }

  /** Listens again, on the port it had before (connections are refused while it is stopped). */
  async listen(): Promise<void> {
    const server = new SMTPServer({
      logger: false,
      // A stopped server is gone at once, its open connections (the app keeps some) cut, as
      // when a real one goes down; smtp-server would otherwise wait 30 s for clients to leave.
      closeTimeout: 1,
      disabledCommands: this.credentials ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
      authOptional: !this.credentials,
      allowInsecureAuth: true,
      onAuth: (auth, _session, done) =>
        auth.username === this.credentials?.user && auth.password === this.credentials?.pass
          ? done(null, { user: auth.username })
          : done(new Error('Invalid username or password')),
      onData: (stream, session, done) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          this.receiving++;
          const held = this.held;
          setTimeout(() => void (held ?? Promise.resolve()).then(finish), this.delayMs);
        });
        const finish = () => {
          this.receiving--;
          if (this.refusal) {
            const error = Object.assign(new Error(this.refusal.message), {
              responseCode: this.refusal.code,
            });
            return done(error);
          }
          const raw = Buffer.concat(chunks).toString('utf8');
          simpleParser(raw).then((parsed) => {
            const text = parsed.text ?? '';
            this.received.push({
              to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              subject: parsed.subject ?? '',
              text,
              html: typeof parsed.html === 'string' ? parsed.html : '',
              links: text.match(LINK) ?? [],
              raw,
            });
            done();
          }, done);
        };
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.server.address() as AddressInfo).port;
    this.server = server;
    this.forget = track(() => this.stop());
  }

  /** Stops listening and drops open connections: sending fails until `listen()`. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.forget?.();
    if (!server) return;
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Every message refused with this reply (450 a temporary failure, 550 a permanent one). */
  refuseWith(code: number, message = 'Mailbox unavailable'): void {
    this.refusal = { code, message };
  }

  accept(): void {
    this.refusal = undefined;
  }

  /** Answers each message only after `ms`, as a slow server would. */
  slowDown(ms: number): void {
    this.delayMs = ms;
  }

  /**
   * Answers no message until the returned function is called, as a server stuck mid-message
   * would (`receiving` counts those waiting): a test decides when the sender hears back.
   */
  hold(): () => void {
    let release!: () => void;
    this.held = new Promise((resolve) => (release = resolve));
    return () => {
      this.held = undefined;
      release();
    };
  }

  /** The messages received so far that match. */
  find(match: Match = {}): ReceivedMail[] {
    return this.received.filter((mail) => matches(mail, match));
  }

  /** The next (or an already received) message that matches; fails after `timeoutMs`. */
  async waitFor(match: Match = {}, timeoutMs?: number): Promise<ReceivedMail> {
    return (await this.waitForCount(match, 1, timeoutMs))[0];
  }

  /**
   * Every message that matches, once there are at least `count` of them (in the order they
   * arrived); fails after `timeoutMs`.
   */
  waitForCount(match: Match, count: number, timeoutMs?: number): Promise<ReceivedMail[]> {
    return waitFor(
      () => {
        const found = this.find(match);
        return found.length >= count ? found : undefined;
      },
      {
        timeoutMs,
        message: () =>
          `${count === 1 ? 'no mail' : `fewer than ${count} mails`} matching ${describe(match)}` +
          ` within ${timeoutMs ?? WAIT_TIMEOUT_MS} ms`,
      },
    );
  }

  /** The path (and query) of the first link in `mail` whose path starts with `prefix`. */
  static linkPath(mail: ReceivedMail, prefix: string): string {
    for (const link of mail.links) {
      const url = new URL(link);
      if (url.pathname.startsWith(prefix)) return url.pathname + url.search;
    }
    throw new Error(`no ${prefix} link in "${mail.subject}": ${mail.links.join(' ')}`);
  }
}

function matches(mail: ReceivedMail, match: Match): boolean {
  if (match.to && !mail.to.includes(match.to.toLowerCase())) return false;
  if (match.subject instanceof RegExp) return match.subject.test(mail.subject);
  return match.subject === undefined || mail.subject === match.subject;
}

function describe(match: Match): string {
  return JSON.stringify({ to: match.to, subject: match.subject?.toString() });
}
