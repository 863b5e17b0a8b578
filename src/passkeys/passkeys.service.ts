import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type {
  AuthenticationResponseJSON,
  AuthenticatorTransport,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { AuditLog } from '../audit/audit-log.js';
import { Clock } from '../clock/clock.js';
import { accountOf, clientOf, type Actor } from '../common/actor.js';
import { isUniqueViolation } from '../common/errors/database-errors.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { Transactions } from '../database/transactions.js';
import { EmailVerificationService } from '../email-verification/email-verification.service.js';
import { SignInLimiter } from '../rate-limit/sign-in-limiter.js';
import { SecurityNotices } from '../security-notices/security-notices.js';
import { UsersRepository } from '../users/users.repository.js';
import type { ChallengePurpose } from './passkey-challenge.entity.js';
import { CHALLENGE_MS, PasskeyChallenges } from './passkey-challenges.js';
import type { Passkey } from './passkey.entity.js';
import {
  PasskeyAlreadyAddedError,
  PasskeyNotFoundError,
  PasskeyRefusedError,
  TooManyPasskeysError,
} from './passkeys.errors.js';
import { PasskeysRepository } from './passkeys.repository.js';
import { relyingPartyOf, type RelyingParty } from './relying-party.js';

/**
 * @simplewebauthn/server, loaded at the first ceremony: it and its CBOR and ASN.1 parsers hold
 * ~4 MB of heap that a server whose people never use a passkey has no need of (Node keeps the
 * module once loaded, so each later call gets it at once).
 */
const webauthn = () => import('@simplewebauthn/server');

const ADDING = 'adding a passkey';

/** The most passkeys one person may have. */
export const MAX_PASSKEYS = 20;

/** The longest answer from a browser that is read at all. */
export const MAX_CREDENTIAL_LENGTH = 16_000;

/** Well-known authenticators by their AAGUID, so the page can say which one holds a passkey. */
const KNOWN_AUTHENTICATORS: Record<string, string> = {
  'ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4': 'Google Password Manager',
  'fbfc3007-154e-4ecc-8c0b-6e020557d7bd': 'Apple Passwords (iCloud Keychain)',
  'bada5566-a7aa-401f-bd96-45619a55120d': '1Password',
  'd548826e-79b4-db40-a3d8-11116f7e8349': 'Bitwarden',
  'adce0002-35bc-c60a-648b-0b25f1f05503': 'Chrome on Mac',
  '08987058-cadc-4b81-b6e1-30de50dcbe96': 'Windows Hello',
  '9ddd1817-af5a-4672-a2b9-3e3dd95000a9': 'Windows Hello',
  '6028b017-b1d4-4c02-b4b3-afcdafc96bb2': 'Windows Hello',
};

/** A passkey as the security page shows it: never its key. */
export interface PasskeyView {
  id: number;
  name: string;
  /** The authenticator, when it says which it is; else whether it is synced or on one device. */
  kind: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

function toView(passkey: Passkey): PasskeyView {
  const known = passkey.aaguid ? KNOWN_AUTHENTICATORS[passkey.aaguid] : undefined;
  const kind =
    known ?? (passkey.deviceType === 'multiDevice' ? 'Synced passkey' : 'Passkey on one device');
  return {
    id: passkey.id,
    name: passkey.name,
    kind,
    createdAt: passkey.createdAt,
    lastUsedAt: passkey.lastUsedAt,
  };
}

/** The browser's answer, as the page's form posts it: JSON, read with care. */
function parseCredential<T extends RegistrationResponseJSON | AuthenticationResponseJSON>(
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

const transportsOf = (passkey: Passkey): AuthenticatorTransport[] | undefined =>
  passkey.transports ? (passkey.transports.split(',') as AuthenticatorTransport[]) : undefined;

/**
 * Passkeys (WebAuthn, with @simplewebauthn/server): adding and removing them, and checking one
 * to sign in (both factors at once), as the second factor, or to confirm a sensitive action.
 * The relying party is APP_URL's host; attestation is not asked for (`none`); user
 * verification is required. Every challenge is used once, by the session it was handed to,
 * within five minutes. Every check of a passkey counts against the client's sign-in attempts.
 */
@Injectable()
export class PasskeysService {
  private readonly rp: RelyingParty;

  constructor(
    private readonly passkeys: PasskeysRepository,
    private readonly challenges: PasskeyChallenges,
    private readonly users: UsersRepository,
    private readonly transactions: Transactions,
    private readonly notices: SecurityNotices,
    private readonly audit: AuditLog,
    private readonly limiter: SignInLimiter,
    private readonly verification: EmailVerificationService,
    private readonly clock: Clock,
    @Inject(CONFIG) config: Config,
  ) {
    this.rp = relyingPartyOf(config);
  }

  async list(actor: Actor): Promise<PasskeyView[]> {
    return (await this.passkeys.findForUser(accountOf(actor))).map(toView);
  }

  /** Whether the person has a passkey (the challenge page offers one then). */
  async has(userId: number): Promise<boolean> {
    return (await this.passkeys.findForUser(userId)).length > 0;
  }

  /**
   * Whether the person must confirm their address before adding a passkey (with
   * EMAIL_VERIFICATION=required): the security page says so instead of offering one.
   */
  addressToConfirm(actor: Actor): Promise<boolean> {
    return this.verification.isPendingFor(actor);
  }

  /**
   * What the browser needs to make a passkey for the person, with a challenge for `session`.
   * Refused while the address is unconfirmed: someone who signed up with another person's
   * address could otherwise plant a passkey that outlasts its owner taking the account back.
   */
  async registrationOptions(
    actor: Actor,
    session: string,
  ): Promise<PublicKeyCredentialCreationOptionsJSON> {
    await this.verification.assertConfirmed(actor, ADDING);
    const userId = accountOf(actor);
    const [user, existing] = await Promise.all([
      this.users.findById(userId),
      this.passkeys.findForUser(userId),
    ]);
    if (!user) throw new PasskeyNotFoundError();
    if (existing.length >= MAX_PASSKEYS) throw new TooManyPasskeysError(MAX_PASSKEYS);
    let handle = await this.passkeys.findHandle(userId);
    if (!handle) {
      await this.transactions.runStatement((m) => this.passkeys.insertHandle(m, userId));
      handle = (await this.passkeys.findHandle(userId))!;
    }
    const options = await (
      await webauthn()
    ).generateRegistrationOptions({
      rpName: this.rp.name,
      rpID: this.rp.id,
      userName: user.email,
      userDisplayName: user.name,
      userID: Buffer.from(handle, 'base64url'),
      attestationType: 'none',
      excludeCredentials: existing.map((p) => ({
        id: p.credentialId,
        transports: transportsOf(p),
      })),
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      timeout: CHALLENGE_MS,
    });
    await this.challenges.save(options.challenge, session, 'register', userId);
    return options;
  }

  /** Adds the passkey the browser made, named by the person; mailed and logged. */
  async register(
    actor: Actor,
    session: string,
    name: string,
    credential: string,
  ): Promise<PasskeyView> {
    await this.verification.assertConfirmed(actor, ADDING);
    const userId = accountOf(actor);
    const { response, challenge } = parseCredential<RegistrationResponseJSON>(credential);
    await this.challenges.take(challenge, session, 'register', userId);
    let info;
    try {
      const verified = await (
        await webauthn()
      ).verifyRegistrationResponse({
        response,
        expectedChallenge: challenge,
        expectedOrigin: this.rp.origin,
        expectedRPID: this.rp.id,
        requireUserVerification: true,
      });
      if (!verified.verified) throw new PasskeyRefusedError();
      info = verified.registrationInfo;
    } catch {
      throw new PasskeyRefusedError();
    }
    try {
      return await this.transactions.run(async (m) => {
        // Counted with the person's row locked: two added at once cannot pass 20 together.
        await this.users.lockForUpdate(m, userId);
        if ((await this.passkeys.countForUser(m, userId)) >= MAX_PASSKEYS) {
          throw new TooManyPasskeysError(MAX_PASSKEYS);
        }
        const saved = await this.passkeys.insert(m, {
          userId,
          credentialId: info.credential.id,
          publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
          counter: info.credential.counter,
          transports: info.credential.transports?.join(',') || null,
          deviceType: info.credentialDeviceType,
          backedUp: info.credentialBackedUp,
          aaguid: info.aaguid,
          name,
        });
        await this.notices.send(m, userId, 'passkey-added', { detail: name });
        const view = toView(saved);
        this.audit.recordAfterCommit(m, actor, {
          event: 'account.passkey_added',
          detail: { name, kind: view.kind },
        });
        return view;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new PasskeyAlreadyAddedError();
      throw error;
    }
  }

  async rename(actor: Actor, id: number, name: string): Promise<PasskeyView> {
    const userId = accountOf(actor);
    const passkey = await this.passkeys.findForOwner(userId, id);
    if (!passkey) throw new PasskeyNotFoundError();
    if (!(await this.transactions.runStatement((m) => this.passkeys.rename(m, userId, id, name))))
      throw new PasskeyNotFoundError();
    if (name !== passkey.name) {
      this.audit.record(actor, {
        event: 'account.passkey_renamed',
        detail: { name, previous_name: passkey.name },
      });
    }
    return toView({ ...passkey, name });
  }

  /** Removes one of the person's passkeys; mailed and logged. It signs nothing in from now on. */
  async remove(actor: Actor, id: number): Promise<PasskeyView> {
    const userId = accountOf(actor);
    const passkey = await this.passkeys.findForOwner(userId, id);
    if (!passkey) throw new PasskeyNotFoundError();
    await this.transactions.run(async (m) => {
      // Of two removals at once, one removes, mails and logs; the other finds nothing.
      if (!(await this.passkeys.remove(m, userId, id))) throw new PasskeyNotFoundError();
      await this.notices.send(m, userId, 'passkey-removed', { detail: passkey.name });
      this.audit.recordAfterCommit(m, actor, {
        event: 'account.passkey_removed',
        detail: { name: passkey.name },
      });
    });
    return toView(passkey);
  }

  /**
   * Removes every passkey of the person's, in `manager`'s transaction (a password reset, signing
   * out everywhere else when asked): each in their security log, `because` saying why; with
   * `notify`, one mail tells them. Returns how many went.
   */
  async removeAll(
    manager: EntityManager,
    actor: Actor,
    because: string,
    { notify = false }: { notify?: boolean } = {},
  ): Promise<number> {
    const userId = accountOf(actor);
    await this.users.lockForUpdate(manager, userId);
    const removed = await this.passkeys.removeAllForUser(manager, userId);
    for (const name of removed) {
      this.audit.recordAfterCommit(manager, actor, {
        event: 'account.passkey_removed',
        detail: { name, because },
      });
    }
    if (notify && removed.length > 0) {
      await this.notices.send(manager, userId, 'passkeys-removed', {
        detail: removed.map((name) => `"${name}"`).join(', '),
      });
    }
    return removed.length;
  }

  /**
   * What the browser needs to sign with a passkey, with a challenge for `session`: any of the
   * site's passkeys to sign in (the browser offers those it holds), the person's own otherwise.
   */
  async authenticationOptions(
    session: string,
    purpose: Exclude<ChallengePurpose, 'register'>,
    userId: number | null,
  ): Promise<PublicKeyCredentialRequestOptionsJSON> {
    const own = userId === null ? [] : await this.passkeys.findForUser(userId);
    if (userId !== null && own.length === 0) {
      throw new PasskeyRefusedError('You have no passkey yet: add one under Security first.');
    }
    const options = await (
      await webauthn()
    ).generateAuthenticationOptions({
      rpID: this.rp.id,
      allowCredentials: own.map((p) => ({ id: p.credentialId, transports: transportsOf(p) })),
      userVerification: 'required',
      timeout: CHALLENGE_MS,
    });
    await this.challenges.save(options.challenge, session, purpose, userId);
    return options;
  }

  /**
   * Checks the browser's signature: the challenge handed to this session for this purpose,
   * this site and origin, a passkey that is the person's (`userId`; to sign in, the one whose
   * user handle it carries), a counter that moved on. Returns whose it is. A refusal of a known
   * passkey is in its person's security log; every check counts against the client's sign-in
   * attempts, and a success is given back.
   */
  async authenticate(
    actor: Actor,
    session: string,
    purpose: Exclude<ChallengePurpose, 'register'>,
    credential: string,
    userId: number | null,
  ): Promise<{ userId: number; name: string }> {
    const attempt = await this.limiter.reserveClient(clientOf(actor).ip ?? undefined);
    try {
      const passkey = await this.verifyAssertion(actor, session, purpose, credential, userId);
      await attempt.giveBack();
      return { userId: passkey.userId, name: passkey.name };
    } catch (error) {
      // A refusal stays counted; anything that could not be checked does not count.
      if (!(error instanceof PasskeyRefusedError)) await attempt.giveBack();
      throw error;
    }
  }

  private async verifyAssertion(
    actor: Actor,
    session: string,
    purpose: Exclude<ChallengePurpose, 'register'>,
    credential: string,
    userId: number | null,
  ): Promise<Passkey> {
    const { response, challenge } = parseCredential<AuthenticationResponseJSON>(credential);
    await this.challenges.take(challenge, session, purpose, userId);
    const passkey = await this.passkeys.findByCredentialId(response.id);
    if (!passkey) throw new PasskeyRefusedError();
    const refuse = (reason: string): never => {
      this.audit.record(actor, {
        event: 'sign-in.failed',
        userId: passkey.userId,
        detail: { reason, passkey: passkey.name },
      });
      throw new PasskeyRefusedError();
    };
    // Another person's passkey where the person is known: it proves nothing about them.
    if (userId !== null && passkey.userId !== userId) throw new PasskeyRefusedError();
    if (userId === null) {
      // Signing in: the account is the one whose user handle the passkey carries.
      const handle = response.response.userHandle;
      const owner = typeof handle === 'string' ? await this.passkeys.userOfHandle(handle) : null;
      if (owner !== passkey.userId) refuse('passkey refused');
    }
    let info;
    try {
      const verified = await (
        await webauthn()
      ).verifyAuthenticationResponse({
        response,
        expectedChallenge: challenge,
        expectedOrigin: this.rp.origin,
        expectedRPID: this.rp.id,
        credential: {
          id: passkey.credentialId,
          publicKey: Buffer.from(passkey.publicKey, 'base64url'),
          counter: passkey.counter,
          transports: transportsOf(passkey),
        },
        requireUserVerification: true,
      });
      if (!verified.verified) refuse('passkey refused');
      info = verified.authenticationInfo;
    } catch (error) {
      if (error instanceof PasskeyRefusedError) throw error;
      // The library names a counter that did not move on: a cloned authenticator, maybe.
      const cloned = error instanceof Error && /counter/i.test(error.message);
      refuse(cloned ? 'passkey signature counter went backwards' : 'passkey refused');
    }
    const used = await this.transactions.runStatement((m) =>
      this.passkeys.recordUse(m, passkey, {
        counter: info!.newCounter,
        backedUp: info!.credentialBackedUp,
        at: this.clock.now(),
      }),
    );
    // Another use with the same counter value got in first.
    if (!used) refuse('passkey signature counter went backwards');
    return passkey;
  }
}
