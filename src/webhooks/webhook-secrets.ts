import { Injectable } from '@nestjs/common';
import { SecretCipher } from '../two-factor/secret-cipher.js';
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

  /** The secrets that sign now: the current one, and the previous one until its time is up. */
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
      secrets.push(this.cipher.decrypt(endpoint.previousSecret, contextOf(endpoint.uid)));
    }
    return secrets;
  }
}

const contextOf = (uid: string): string => `webhook endpoint ${uid}`;
const authorizationContextOf = (uid: string): string => `webhook endpoint ${uid} authorization`;
