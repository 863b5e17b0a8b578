import addressparser from 'nodemailer/lib/addressparser';
import { EnvReader, integer, oneOf, redactUrl, text } from './env-reader.js';

export const EMAIL_VERIFICATION_MODES = ['required', 'off'] as const;

export interface MailConfig {
  /** The SMTP server (MAIL_URL); null writes each message to `dir` as an .eml file instead. */
  smtpUrl: string | null;
  /** The From header of every message. */
  from: string;
  /** Where messages go when there is no SMTP server. */
  dir: string;
  /** `required`: a person confirms their address before creating API tokens. */
  verification: (typeof EMAIL_VERIFICATION_MODES)[number];
  /** Tries per message before it is marked failed. */
  maxAttempts: number;
  /** The wait before the first retry; each further retry waits twice as long. */
  retrySeconds: number;
  /** How often an instance looks for messages due that nobody woke it for. */
  pollSeconds: number;
}

const smtpUrl = (raw: string): string | null | { error: string } => {
  if (raw === '') return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { error: 'must be an smtp:// or smtps:// URL' };
  }
  if (!['smtp:', 'smtps:'].includes(url.protocol) || !url.hostname) {
    return { error: 'must be smtp://user:pass@host:port or smtps://user:pass@host:port' };
  }
  return raw;
};

const fromAddress = (raw: string): string | { error: string } => {
  const parsed = addressparser(raw, { flatten: true });
  return parsed.length === 1 && /^[^@\s]+@[^@\s]+$/.test(parsed[0].address)
    ? raw
    : { error: 'must be one address, such as "Tessera <no-reply@example.com>"' };
};

export function readMailConfig(
  r: EnvReader,
  app: { nodeEnv: string; publicUrl: string | undefined },
): MailConfig {
  const host = app.publicUrl ? new URL(app.publicUrl).hostname : 'localhost';
  const config: MailConfig = {
    smtpUrl: r.read('MAIL_URL', '', smtpUrl, redactUrl),
    from: r.read('MAIL_FROM', `Tessera <no-reply@${host}>`, fromAddress),
    dir: r.read('MAIL_DIR', 'data/mail', text),
    verification: r.read('EMAIL_VERIFICATION', 'required', oneOf(EMAIL_VERIFICATION_MODES)),
    maxAttempts: r.read('MAIL_MAX_ATTEMPTS', '8', integer(1, 50)),
    retrySeconds: r.read('MAIL_RETRY_SECONDS', '15', integer(1, 3600)),
    pollSeconds: r.read('MAIL_POLL_SECONDS', '10', integer(1, 3600)),
  };
  if (app.nodeEnv === 'production' && !config.smtpUrl && config.verification === 'required') {
    r.problems.push(
      'EMAIL_VERIFICATION=required needs MAIL_URL in production (nobody would receive the links); set MAIL_URL, or EMAIL_VERIFICATION=off for an install without mail',
    );
  } else if (app.nodeEnv === 'production' && !config.smtpUrl) {
    r.warnings.push(
      `MAIL_URL is not set: messages (password resets too) are written to ${config.dir} and nobody receives them`,
    );
  }
  return config;
}
