import { describe, expect, it } from '@jest/globals';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type WebAuthnCredential,
} from '@simplewebauthn/server';
import { SoftAuthenticator, type WebAuthnOverrides } from './support/webauthn.js';

// The test passkey authenticator against @simplewebauthn/server itself, without the app: what it
// sends verifies, and each override is refused by the library for its own reason.

const rpID = 'localhost';
const ORIGIN = 'http://localhost:3000';

function registrationOptions(excludeCredentials: { id: string }[] = []) {
  return generateRegistrationOptions({
    rpName: 'Tessera',
    rpID,
    userName: 'ada@example.com',
    attestationType: 'none',
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    excludeCredentials,
  });
}

async function register(authenticator: SoftAuthenticator, overrides?: WebAuthnOverrides) {
  const options = await registrationOptions();
  const response = authenticator.register(options, ORIGIN, overrides);
  const verification = await verifyRegistrationResponse({
    response,
    expectedChallenge: options.challenge,
    expectedOrigin: ORIGIN,
    expectedRPID: rpID,
    requireUserVerification: true,
  });
  return { options, response, verification };
}

/** Registers the authenticator and returns the credential a server would store. */
async function registered(authenticator: SoftAuthenticator): Promise<WebAuthnCredential> {
  const { verification } = await register(authenticator);
  if (!verification.registrationInfo) throw new Error('registration not verified');
  return verification.registrationInfo.credential;
}

async function signIn(
  authenticator: SoftAuthenticator,
  credential: WebAuthnCredential,
  overrides?: WebAuthnOverrides,
  tamper: (response: AuthenticationResponseJSON) => AuthenticationResponseJSON = (r) => r,
) {
  const options = await generateAuthenticationOptions({
    rpID,
    allowCredentials: [],
    userVerification: 'required',
  });
  const response = tamper(authenticator.authenticate(options, ORIGIN, overrides));
  const verification = await verifyAuthenticationResponse({
    response,
    expectedChallenge: options.challenge,
    expectedOrigin: ORIGIN,
    expectedRPID: rpID,
    credential,
    requireUserVerification: true,
  });
  return { response, verification };
}

/** Why the library refused: its error, or 'not verified'. Fails when it accepted. */
async function refusal(verifying: Promise<{ verification: { verified: boolean } }>) {
  try {
    const { verification } = await verifying;
    if (verification.verified) throw new Error('accepted');
    return 'not verified';
  } catch (error) {
    if ((error as Error).message === 'accepted') throw error;
    return (error as Error).message;
  }
}

const refusals: [string, WebAuthnOverrides, RegExp][] = [
  ['another origin', { origin: 'https://evil.example' }, /origin "https:\/\/evil.example"/],
  ['another RP id', { rpId: 'evil.example' }, /RP ID hash/],
  ['another challenge', { challenge: Buffer.from('old').toString('base64url') }, /challenge/],
  ['no user verification', { userVerified: false }, /User verification/],
];

describe('SoftAuthenticator', () => {
  describe('register', () => {
    it('should be verified with its credential id, public key and counter when asked as a site does', async () => {
      const authenticator = SoftAuthenticator.create({ counter: 3 });
      const { options, response, verification } = await register(authenticator);

      expect(verification.verified).toBe(true);
      expect(verification.registrationInfo).toMatchObject({
        fmt: 'none',
        aaguid: '00000000-0000-0000-0000-000000000000',
        userVerified: true,
        credentialDeviceType: 'singleDevice',
        credentialBackedUp: false,
        origin: ORIGIN,
        rpID,
        credential: { id: authenticator.credentialId, counter: 3, transports: ['internal'] },
      });
      const publicKey = verification.registrationInfo?.credential.publicKey;
      expect(Buffer.from(publicKey ?? []).equals(authenticator.cosePublicKey)).toBe(true);
      expect(response).toMatchObject({ id: authenticator.credentialId, type: 'public-key' });
      expect(Buffer.from(authenticator.credentialId, 'base64url')).toHaveLength(32);
      expect(authenticator.userHandle).toBe(options.user.id);
    });

    it('should be verified as a backed-up multi-device passkey of its model when created so', async () => {
      const aaguid = 'fbfc3007-154e-4ecc-8c0b-6e020557d7bd';
      const authenticator = SoftAuthenticator.create({
        aaguid,
        backupEligible: true,
        backedUp: true,
      });
      const { verification } = await register(authenticator);

      expect(verification.registrationInfo).toMatchObject({
        aaguid,
        credentialDeviceType: 'multiDevice',
        credentialBackedUp: true,
      });
    });

    it.each(refusals)('should be refused when it sends %s', async (_, overrides, reason) => {
      expect(await refusal(register(SoftAuthenticator.create(), overrides))).toMatch(reason);
    });

    it('should refuse to register again when its credential is in excludeCredentials', async () => {
      const authenticator = SoftAuthenticator.create();
      await registered(authenticator);
      const options = await registrationOptions([{ id: authenticator.credentialId }]);

      expect(() => authenticator.register(options, ORIGIN)).toThrow(/excludeCredentials/);
    });
  });

  describe('authenticate', () => {
    it('should be verified with the user handle and a higher counter when it signs in again', async () => {
      const authenticator = SoftAuthenticator.create({ counter: 7 });
      const credential = await registered(authenticator);

      const first = await signIn(authenticator, credential);
      expect(first.verification).toMatchObject({
        verified: true,
        authenticationInfo: { credentialID: credential.id, newCounter: 8, userVerified: true },
      });
      expect(first.response.response.userHandle).toBe(authenticator.userHandle);
      expect(first.response.id).toBe(authenticator.credentialId);

      const second = await signIn(authenticator, { ...credential, counter: 8 });
      expect(second.verification).toMatchObject({
        verified: true,
        authenticationInfo: { newCounter: 9 },
      });
    });

    it('should be verified with a counter that stays at 0 when created so', async () => {
      const authenticator = SoftAuthenticator.create({ staticCounter: true });
      const credential = await registered(authenticator);

      for (let i = 0; i < 2; i += 1) {
        const { verification } = await signIn(authenticator, credential);
        expect(verification).toMatchObject({
          verified: true,
          authenticationInfo: { newCounter: 0 },
        });
      }
    });

    it('should sign what it sends when a field is overridden', async () => {
      const authenticator = SoftAuthenticator.create();
      const credential = await registered(authenticator);
      const handle = Buffer.from('someone else').toString('base64url');

      const { response, verification } = await signIn(authenticator, credential, {
        counter: 1000,
        userHandle: handle,
      });

      expect(verification).toMatchObject({
        verified: true,
        authenticationInfo: { newCounter: 1000 },
      });
      expect(response.response.userHandle).toBe(handle);
      expect(authenticator.counter).toBe(0);
    });

    it.each(refusals)('should be refused when it sends %s', async (_, overrides, reason) => {
      const authenticator = SoftAuthenticator.create();
      const credential = await registered(authenticator);

      expect(await refusal(signIn(authenticator, credential, overrides))).toMatch(reason);
    });

    it('should be refused when its counter goes backwards', async () => {
      const authenticator = SoftAuthenticator.create({ counter: 5 });
      const credential = await registered(authenticator);
      const { verification } = await signIn(authenticator, credential);
      const stored = { ...credential, counter: verification.authenticationInfo.newCounter };

      const refused = await refusal(signIn(authenticator, stored, { counter: 4 }));

      expect(refused).toMatch(/counter value 4 was lower than expected 6/);
    });

    it('should not be verified when its signature is tampered with', async () => {
      const authenticator = SoftAuthenticator.create();
      const credential = await registered(authenticator);
      const tamper = (response: AuthenticationResponseJSON) => {
        const signature = Buffer.from(response.response.signature, 'base64url');
        signature[signature.length - 1] ^= 0x01;
        return {
          ...response,
          response: { ...response.response, signature: signature.toString('base64url') },
        };
      };

      expect(await refusal(signIn(authenticator, credential, {}, tamper))).toBe('not verified');
    });

    it('should not be verified against the other credential when it claims its id', async () => {
      const victim = SoftAuthenticator.create();
      const victimCredential = await registered(victim);
      const attacker = SoftAuthenticator.create();
      await registered(attacker);

      const refused = await refusal(
        signIn(attacker, victimCredential, { credentialId: victim.credentialId }),
      );

      expect(refused).toBe('not verified');
    });

    it('should answer only when allowCredentials is empty or lists its credential', async () => {
      const authenticator = SoftAuthenticator.create();
      await registered(authenticator);
      const other = SoftAuthenticator.create();
      const ask = (ids: string[]) =>
        generateAuthenticationOptions({
          rpID,
          allowCredentials: ids.map((id) => ({ id })),
        });

      const elsewhere = await ask([other.credentialId]);
      expect(() => authenticator.authenticate(elsewhere, ORIGIN)).toThrow(/allowCredentials/);
      const listed = await ask([other.credentialId, authenticator.credentialId]);
      expect(authenticator.authenticate(listed, ORIGIN).id).toBe(authenticator.credentialId);
    });

    it('should refuse to answer when it was never registered', async () => {
      const options = await generateAuthenticationOptions({ rpID });

      expect(() => SoftAuthenticator.create().authenticate(options, ORIGIN)).toThrow(/register/);
    });
  });
});
