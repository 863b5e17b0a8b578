import { Inject, Injectable } from '@nestjs/common';
import type { SessionData } from 'express-session';
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import type { CreatedToken } from './tokens.service.js';

type RevealHolder = Partial<Pick<SessionData, 'revealToken'>>;

/**
 * Carries a just-created token across the redirect to the page that shows it once. Sessions
 * live in the database, so the token is sealed (AES-256-GCM, key derived from SESSION_SECRET)
 * and only the next render of the tokens page opens and drops it: a database dump never holds
 * a usable token.
 */
@Injectable()
export class TokenReveal {
  private readonly key: Buffer;

  constructor(@Inject(CONFIG) config: Config) {
    this.key = Buffer.from(
      hkdfSync('sha256', config.web.sessionSecret, '', 'tessera:token-reveal', 32),
    );
  }

  put(session: RevealHolder, created: CreatedToken): void {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(created.plaintext, 'utf8'), cipher.final()]);
    const sealed = [iv, body, cipher.getAuthTag()].map((b) => b.toString('base64url')).join('.');
    session.revealToken = { id: created.token.id, name: created.token.name, sealed };
  }

  /** The token to show now, once; null when there is none (or it cannot be opened). */
  take(session: RevealHolder): { id: number; name: string; plaintext: string } | null {
    const reveal = session.revealToken;
    if (!reveal) return null;
    delete session.revealToken;
    try {
      const [iv, body, tag] = reveal.sealed
        .split('.')
        .map((part) => Buffer.from(part, 'base64url'));
      const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
      decipher.setAuthTag(tag);
      const plaintext = Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
      return { id: reveal.id, name: reveal.name, plaintext };
    } catch {
      return null;
    }
  }
}
