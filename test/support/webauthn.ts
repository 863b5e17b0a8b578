import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialDescriptorJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { isoCBOR } from '@simplewebauthn/server/helpers';

/** Authenticator data flags (WebAuthn §6.1). */
const UP = 0x01;
const UV = 0x04;
const BE = 0x08;
const BS = 0x10;
const AT = 0x40;
/** COSE: key type EC2, algorithm ES256, curve P-256. */
const EC2 = 2;
const ES256 = -7;
const P256 = 1;

type CBOR = Parameters<typeof isoCBOR.encode>[0];
type Settings = Required<
  Pick<SoftAuthenticatorOptions, 'staticCounter' | 'aaguid' | 'backupEligible' | 'backedUp'>
>;

export interface SoftAuthenticatorOptions {
  /** The signature counter it starts at; 0 unless told. */
  counter?: number;
  /** Never counts its uses, as synced passkeys do: every assertion says 0. */
  staticCounter?: boolean;
  /** Its model's AAGUID, e.g. 'ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4'; zeros unless told. */
  aaguid?: string;
  /** BE: the credential may be synced to other devices (a multi-device passkey). */
  backupEligible?: boolean;
  /** BS: the credential is synced now; needs `backupEligible`. */
  backedUp?: boolean;
  /** Length of the random credential id, 16 to 1023 bytes; 32 unless told. */
  credentialIdLength?: number;
}

/**
 * What a misbehaving client or authenticator sends instead. Each field replaces its part of
 * the response and the signature is made over what is sent, so a server that refuses it does
 * so for that reason, never for a bad signature. Overrides change no state of the authenticator.
 */
export interface WebAuthnOverrides {
  /** The origin put in clientDataJSON. */
  origin?: string;
  /** The RP id whose SHA-256 starts the authenticator data. */
  rpId?: string;
  /** The challenge put in clientDataJSON. */
  challenge?: string;
  /** The signature counter sent (e.g. lower than the last one: a cloned authenticator). */
  counter?: number;
  /** false: the UV flag is off (the user was present but not verified). */
  userVerified?: boolean;
  /** The credential id claimed (base64url); the allow/exclude lists are then not checked. */
  credentialId?: string;
  /** The user handle sent with an assertion (base64url). */
  userHandle?: string;
}

/**
 * A passkey authenticator for HTTP-level tests, no browser needed: one discoverable ES256
 * credential with a signature counter, answering the JSON options of @simplewebauthn/server
 * with the JSON @simplewebauthn/browser would post (attestation 'none').
 */
export class SoftAuthenticator {
  /** The credential id, base64url. */
  readonly credentialId: string;
  /** The public key as a COSE_Key: what a server stores as the credential's public key. */
  readonly cosePublicKey: Uint8Array;
  private userId?: string;

  private constructor(
    private readonly privateKey: KeyObject,
    private readonly publicKey: KeyObject,
    private readonly settings: Settings,
    private signCount: number,
    credentialIdLength: number,
  ) {
    this.credentialId = randomBytes(credentialIdLength).toString('base64url');
    this.cosePublicKey = coseKeyOf(publicKey);
  }

  static create(options: SoftAuthenticatorOptions = {}): SoftAuthenticator {
    const { counter = 0, credentialIdLength = 32, ...flags } = options;
    const settings: Settings = {
      staticCounter: false,
      aaguid: '00000000-0000-0000-0000-000000000000',
      backupEligible: false,
      backedUp: false,
      ...flags,
    };
    if (settings.backedUp && !settings.backupEligible) {
      throw new Error('a credential cannot be backed up without being backup eligible');
    }
    if (credentialIdLength < 16 || credentialIdLength > 1023) {
      throw new Error(`credential id length ${credentialIdLength} out of 16..1023`);
    }
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    return new SoftAuthenticator(privateKey, publicKey, settings, counter, credentialIdLength);
  }

  /** The signature counter it last signed with (an override of it aside). */
  get counter(): number {
    return this.signCount;
  }

  /** The user handle (base64url) of the registration, kept for assertions. */
  get userHandle(): string | undefined {
    return this.userId;
  }

  /**
   * Creates the credential for `options.user` as `navigator.credentials.create()` would and
   * returns what startRegistration() posts. Throws, as a browser would, when this credential is
   * in `excludeCredentials` or ES256 is not among `pubKeyCredParams`.
   */
  register(
    options: PublicKeyCredentialCreationOptionsJSON,
    origin: string,
    overrides: WebAuthnOverrides = {},
  ): RegistrationResponseJSON {
    const id = overrides.credentialId ?? this.credentialId;
    if (!overrides.credentialId && listed(options.excludeCredentials, id)) {
      throw new Error('InvalidStateError: this credential is in excludeCredentials');
    }
    if (!options.pubKeyCredParams.some((param) => param.alg === ES256)) {
      throw new Error('NotSupportedError: ES256 (-7) is not among pubKeyCredParams');
    }
    this.userId = options.user.id;
    const rpId = overrides.rpId ?? options.rp.id ?? new URL(origin).hostname;
    const counter = overrides.counter ?? this.signCount;
    const authData = this.authenticatorData(rpId, counter, overrides, this.attestedData(id));
    const attestationObject = new Map<string, CBOR>([
      ['fmt', 'none'],
      ['attStmt', new Map()],
      ['authData', authData],
    ]);
    const clientData = clientDataJSON('webauthn.create', options.challenge, origin, overrides);
    return credentialJSON(id, {
      clientDataJSON: base64url(clientData),
      attestationObject: base64url(isoCBOR.encode(attestationObject)),
      authenticatorData: base64url(authData),
      transports: ['internal'],
      publicKeyAlgorithm: ES256,
      publicKey: base64url(this.publicKey.export({ type: 'spki', format: 'der' })),
    });
  }

  /**
   * Signs the challenge as `navigator.credentials.get()` would and returns what
   * startAuthentication() posts, with the user handle of the registration. The counter goes up
   * first (unless `staticCounter`). Throws, as no real authenticator would answer, when
   * `allowCredentials` lists credentials but not this one, or before any registration.
   */
  authenticate(
    options: PublicKeyCredentialRequestOptionsJSON,
    origin: string,
    overrides: WebAuthnOverrides = {},
  ): AuthenticationResponseJSON {
    const id = overrides.credentialId ?? this.credentialId;
    const allowed = options.allowCredentials ?? [];
    if (!overrides.credentialId && allowed.length > 0 && !listed(allowed, id)) {
      throw new Error('NotAllowedError: this credential is not in allowCredentials');
    }
    if (this.userId === undefined) throw new Error('register the authenticator first');
    if (overrides.counter === undefined && !this.settings.staticCounter) this.signCount += 1;
    const rpId = overrides.rpId ?? options.rpId ?? new URL(origin).hostname;
    const authData = this.authenticatorData(rpId, overrides.counter ?? this.signCount, overrides);
    const clientData = clientDataJSON('webauthn.get', options.challenge, origin, overrides);
    const signed = Buffer.concat([authData, sha256(clientData)]);
    return credentialJSON(id, {
      clientDataJSON: base64url(clientData),
      authenticatorData: base64url(authData),
      signature: base64url(sign('sha256', signed, this.privateKey)),
      userHandle: overrides.userHandle ?? this.userId,
    });
  }

  /** rpIdHash ‖ flags ‖ counter (big-endian) ‖ attested credential data, if any (AT). */
  private authenticatorData(
    rpId: string,
    counter: number,
    overrides: WebAuthnOverrides,
    attested?: Buffer,
  ): Buffer {
    let flags = UP;
    if (overrides.userVerified !== false) flags |= UV;
    if (this.settings.backupEligible) flags |= BE;
    if (this.settings.backedUp) flags |= BS;
    if (attested) flags |= AT;
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter);
    return Buffer.concat([sha256(rpId), Buffer.of(flags), count, attested ?? Buffer.alloc(0)]);
  }

  /** AAGUID ‖ credential id length (2 bytes) ‖ credential id ‖ COSE_Key. */
  private attestedData(credentialId: string): Buffer {
    const rawId = Buffer.from(credentialId, 'base64url');
    const length = Buffer.alloc(2);
    length.writeUInt16BE(rawId.length);
    return Buffer.concat([uuidBytes(this.settings.aaguid), length, rawId, this.cosePublicKey]);
  }
}

/** The PublicKeyCredential JSON around an authenticator's response, as the browser lib makes it. */
function credentialJSON<Response>(id: string, response: Response) {
  return {
    id,
    rawId: id,
    response,
    authenticatorAttachment: 'platform' as const,
    clientExtensionResults: {},
    type: 'public-key' as const,
  };
}

function clientDataJSON(
  type: 'webauthn.create' | 'webauthn.get',
  challenge: string,
  origin: string,
  overrides: WebAuthnOverrides,
): Buffer {
  const data = {
    type,
    challenge: overrides.challenge ?? challenge,
    origin: overrides.origin ?? origin,
    crossOrigin: false,
  };
  return Buffer.from(JSON.stringify(data));
}

/** The COSE_Key of a P-256 public key: {1: EC2, 3: ES256, -1: P-256, -2: x, -3: y}. */
function coseKeyOf(publicKey: KeyObject): Uint8Array {
  const { x, y } = publicKey.export({ format: 'jwk' });
  if (!x || !y) throw new Error('not an EC public key');
  return isoCBOR.encode(
    new Map<number, CBOR>([
      [1, EC2],
      [3, ES256],
      [-1, P256],
      [-2, Buffer.from(x, 'base64url')],
      [-3, Buffer.from(y, 'base64url')],
    ]),
  );
}

function listed(list: PublicKeyCredentialDescriptorJSON[] | undefined, id: string): boolean {
  return (list ?? []).some((credential) => credential.id === id);
}

function uuidBytes(uuid: string): Buffer {
  const bytes = Buffer.from(uuid.replaceAll('-', ''), 'hex');
  if (bytes.length !== 16) throw new Error(`not a UUID: ${uuid}`);
  return bytes;
}

function sha256(data: string | Uint8Array): Buffer {
  return createHash('sha256').update(data).digest();
}

function base64url(data: Uint8Array): string {
  return Buffer.from(data).toString('base64url');
}
