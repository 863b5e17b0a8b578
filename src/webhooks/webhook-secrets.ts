import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { SecretCipher, UnreadableSecretError } from '../two-factor/secret-cipher.js';
import type { WebhookEndpoint } from './webhook-endpoint.entity.js';

/**
 * Signing secrets at rest: encrypted as two-factor secrets are (AES-256-GCM under a key derived
 * from SESSION_SECRET), each bound to its endpoint's uid so a value copied to another row does
 * not open there.
 */
@Injectable()
export class WebhookSecrets {
  constructor(private readonly cipher: SecretCipher) {}

  seal(uid: string, secret: string): string {
    return this.cipher.encrypt(secret, contextOf(uid));
  }

  /** An audit stream's Authorization header value, bound to its endpoint as its secret is. */
  sealAuthorization(uid: string, value: string): string {
    return this.cipher.encrypt(value, authorizationContextOf(uid));
  }

  authorizationOf(endpoint: Pick<WebhookEndpoint, 'uid' | 'authorizationHeader'>): string | null {
    if (!endpoint.authorizationHeader) return null;
    return this.cipher.decrypt(endpoint.authorizationHeader, authorizationContextOf(endpoint.uid));
  }

  /** The endpoint's current secret (to compare with the one WEBHOOK_ENDPOINTS lists). */
  currentOf(endpoint: Pick<WebhookEndpoint, 'uid' | 'secret'>): string {
    return this.cipher.decrypt(endpoint.secret, contextOf(endpoint.uid));
  }

  /**
   * The secrets that sign now: the current one, and the previous one until its time is up. A
   * current secret that cannot be read (sealed under another SESSION_SECRET) throws
   * `UnreadableSecretError`; a previous one that cannot is left out, so that rotating the
   * secret is enough to send again.
   */
  signingSecrets(
    endpoint: Pick<WebhookEndpoint, 'uid' | 'secret' | 'previousSecret' | 'previousSecretUntil'>,
    now: Date,
  ): string[] {
    const secrets = [this.cipher.decrypt(endpoint.secret, contextOf(endpoint.uid))];
    if (
      endpoint.previousSecret &&
      endpoint.previousSecretUntil &&
      endpoint.previousSecretUntil > now
    ) {
      try {
        secrets.push(this.cipher.decrypt(endpoint.previousSecret, contextOf(endpoint.uid)));
      } catch (error) {
        if (!(error instanceof UnreadableSecretError)) throw error;
      }
    }
    return secrets;
  }
}

/**
 * Which secret an endpoint has now, without saying anything of it: a digest of its sealed
 * (random-nonce) value. A rotation form carries it, so that the same click rotates once.
 */
export function secretVersionOf(endpoint: Pick<WebhookEndpoint, 'secret'>): string {
  return createHash('sha256').update(endpoint.secret).digest('base64url').slice(0, 16);
}

const contextOf = (uid: string): string => `webhook endpoint ${uid}`;
const authorizationContextOf = (uid: string): string => `webhook endpoint ${uid} authorization`;
