import type {
  AuthenticationResponseJSON,
  AuthenticatorTransport,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { Passkey } from './passkey.entity.js';
import { PasskeyRefusedError } from './passkeys.errors.js';

/**
 * @simplewebauthn/server, loaded at the first ceremony: it and its CBOR and ASN.1 parsers hold
 * ~4 MB of heap that a server whose people never use a passkey has no need of (Node keeps the
 * module once loaded, so each later call gets it at once).
 */
export const webauthn = () => import('@simplewebauthn/server');

/** The longest answer from a browser that is read at all. */
export const MAX_CREDENTIAL_LENGTH = 16_000;

/** The browser's answer, as the page's form posts it: JSON, read with care. */
export function parseCredential<T extends RegistrationResponseJSON | AuthenticationResponseJSON>(
  raw: string,
): { response: T; challenge: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new PasskeyRefusedError();
  }
  const credential = parsed as Partial<AuthenticationResponseJSON> | null;
  if (
    !credential ||
    typeof credential !== 'object' ||
    typeof credential.id !== 'string' ||
    typeof credential.rawId !== 'string' ||
    credential.type !== 'public-key' ||
    !credential.response ||
    typeof credential.response !== 'object' ||
    typeof credential.response.clientDataJSON !== 'string'
  ) {
    throw new PasskeyRefusedError();
  }
  let challenge: unknown;
  try {
    challenge = (
      JSON.parse(Buffer.from(credential.response.clientDataJSON, 'base64url').toString('utf8')) as {
        challenge?: unknown;
      }
    ).challenge;
  } catch {
    throw new PasskeyRefusedError();
  }
  if (typeof challenge !== 'string' || challenge.length === 0 || challenge.length > 64) {
    throw new PasskeyRefusedError();
  }
  return { response: credential as T, challenge };
}

export const transportsOf = (passkey: Passkey): AuthenticatorTransport[] | undefined =>
  passkey.transports ? (passkey.transports.split(',') as AuthenticatorTransport[]) : undefined;
