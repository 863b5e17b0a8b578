import { Inject, Injectable } from '@nestjs/common';
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A stored secret that this server's key cannot open (SESSION_SECRET changed, or a bad row). */
export class UnreadableSecretError extends Error {}

/**
 * Encrypts two-factor secrets at rest with AES-256-GCM, under a key derived from SESSION_SECRET
 * with HKDF (its own `info`, so the key is not the one that signs cookies). Each value is bound
 * to what it belongs to (`context`, authenticated but not stored): a ciphertext copied to
 * another person's row does not open there.
 */
@Injectable()
export class SecretCipher {
  private readonly key: Buffer;

  constructor(@Inject(CONFIG) config: Config) {
    this.key = Buffer.from(
      hkdfSync('sha256', config.web.sessionSecret, 'tessera', 'two-factor secrets v1', 32),
    );
  }

  encrypt(plaintext: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
  }

  /** Throws UnreadableSecretError when the value was not made by this key for this context. */
  decrypt(stored: string, context: string): string {
    const [version, encoded] = stored.split('.');
    const raw = Buffer.from(encoded ?? '', 'base64url');
    if (version !== VERSION || raw.length <= IV_BYTES + TAG_BYTES) {
      throw new UnreadableSecretError('not a v1 secret');
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      const body = raw.subarray(IV_BYTES + TAG_BYTES);
      return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
    } catch {
      throw new UnreadableSecretError('the key or the context does not match');
    }
  }
}
