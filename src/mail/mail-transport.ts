import { Logger } from '@nestjs/common';
import type { Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import { encodeWord } from 'nodemailer/lib/mime-funcs';
import { randomBytes } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MailConfig } from '../config/mail.config.js';
import type { MailMessage } from './mail-message.js';
import type { Clock } from '../clock/clock.js';

/** Hands a message over for delivery; rejects when it could not. */
export abstract class MailTransport {
  abstract send(message: MailMessage): Promise<void>;
  close(): void {}
}

/**
 * The message as handed to nodemailer. A subject carries people's words (a team's or a token's
 * name); one that looks like an encoded-word (`=?utf-8?q?…?=`) would go out as plain ASCII and
 * be decoded by the reader's mail program into something else: such a subject is encoded
 * itself, so it reads exactly as written.
 */
export function asSent(message: MailMessage): MailMessage {
  return message.subject.includes('=?')
    ? { ...message, subject: encodeWord(message.subject, 'Q', 52) }
    : message;
}

/** Options no message of ours needs and that would let content read files or fetch URLs. */
const CONTENT_ACCESS = { disableFileAccess: true, disableUrlAccess: true };

/**
 * nodemailer's transporter, made at the first message: nodemailer and its transports hold
 * ~1.6 MB of heap beyond what the app loads anyway, which a server that sends no mail (one
 * that only answers the API) never needs.
 */
function lazyTransporter(
  options: Parameters<typeof import('nodemailer').createTransport>[0],
  defaults?: object,
): { get(): Promise<Transporter>; close(): void } {
  let made: Promise<Transporter> | undefined;
  return {
    get: () =>
      (made ??= import('nodemailer').then(({ createTransport }) =>
        createTransport(options, defaults),
      )),
    close: () => void made?.then((transporter) => transporter.close()),
  };
}

/**
 * MAIL_URL: one connection per message, with timeouts a lease outlasts. (Connections kept open
 * between messages, nodemailer's pool, once left a message the server refused without its last
 * tries in the mail outbox spec; not used until that is understood.)
 */
export class SmtpMailTransport extends MailTransport {
  private readonly transporter: ReturnType<typeof lazyTransporter>;

  constructor(url: string, from: string) {
    super();
    this.transporter = lazyTransporter(
      {
        url,
        connectionTimeout: 10_000,
        greetingTimeout: 10_000,
        socketTimeout: 30_000,
        ...CONTENT_ACCESS,
      } satisfies SMTPTransport.Options,
      { from },
    );
  }

  async send(message: MailMessage): Promise<void> {
    await (await this.transporter.get()).sendMail(asSent(message));
  }

  override close(): void {
    this.transporter.close();
  }
}

const LINK = /https?:\/\/[^\s<>"]+/g;

/**
 * Without MAIL_URL: each message is written to `dir` as an .eml file that any mail program opens.
 * Outside production, one log line names the file and the message's links, so a developer can
 * follow them: the one place a link (and the token in it) is logged. In production only the
 * file is named.
 */
export class FileMailTransport extends MailTransport {
  private readonly logger = new Logger('Mail');
  private readonly transporter = lazyTransporter({
    streamTransport: true,
    buffer: true,
    newline: 'unix',
    ...CONTENT_ACCESS,
  });

  constructor(
    private readonly dir: string,
    private readonly from: string,
    private readonly logLinks: boolean,
    private readonly clock: Clock,
  ) {
    super();
  }

  async send(message: MailMessage): Promise<void> {
    const transporter = await this.transporter.get();
    const info = await transporter.sendMail({ ...asSent(message), from: this.from });
    await mkdir(this.dir, { recursive: true });
    const stamp = this.clock.now().toISOString().replace(/[:.]/g, '-');
    const name = `${stamp}-${randomBytes(4).toString('hex')}.eml`;
    const file = join(this.dir, name);
    // Written under a hidden name, then renamed: whoever watches the folder (a mail program, a
    // test) sees each message whole or not at all.
    const partial = join(this.dir, `.${name}.partial`);
    await writeFile(partial, info.message as Buffer, { mode: 0o600 });
    await rename(partial, file);
    const links = this.logLinks ? [...new Set(message.text.match(LINK) ?? [])] : [];
    this.logger.log(
      `"${message.subject}" written to ${file}${links.length ? `; links: ${links.join(' ')}` : ''}`,
    );
  }
}

export function createMailTransport(
  config: MailConfig,
  production: boolean,
  clock: Clock,
): MailTransport {
  return config.smtpUrl
    ? new SmtpMailTransport(config.smtpUrl, config.from)
    : new FileMailTransport(config.dir, config.from, !production, clock);
}
