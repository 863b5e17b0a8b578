import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type {
  PublicKeyCredentialCreationOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { AuditLog } from '../audit/audit-log.js';
import { Clock } from '../clock/clock.js';
import { SignInRequiredError } from '../auth/auth.errors.js';
import { SessionsRepository } from '../auth/sessions.repository.js';
import { accountOf, type Actor } from '../common/actor.js';
import { isUniqueViolation } from '../common/errors/database-errors.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { Transactions } from '../database/transactions.js';
import { EmailVerificationService } from '../email-verification/email-verification.service.js';
import { SecurityNotices } from '../security-notices/security-notices.js';
import { UsersRepository } from '../users/users.repository.js';
import { CHALLENGE_MS, PasskeyChallenges } from './passkey-challenges.js';
import { parseCredential, transportsOf, webauthn } from './passkey-credentials.js';
import { toView, type PasskeyView } from './passkey.view.js';
import {
  PasskeyAlreadyAddedError,
  PasskeyNotFoundError,
  PasskeyRefusedError,
  TooManyPasskeysError,
} from './passkeys.errors.js';
import { PasskeysRepository } from './passkeys.repository.js';
import { relyingPartyOf, type RelyingParty } from './relying-party.js';

const ADDING = 'adding a passkey';

/** The most passkeys one person may have. */
export const MAX_PASSKEYS = 20;

/**
 * Passkeys (WebAuthn, with @simplewebauthn/server): the person's list, adding, renaming and
 * removing them. The relying party is APP_URL's host; attestation is not asked for (`none`);
 * user verification is required; every challenge is used once, by the session it was handed to,
 * within five minutes. Checking one (to sign in, as the second factor, to confirm a
 * sensitive action) is PasskeyAuthenticationService's.
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
    private readonly verification: EmailVerificationService,
    private readonly sessions: SessionsRepository,
    private readonly clock: Clock,
    @Inject(CONFIG) config: Config,
  ) {
    this.rp = relyingPartyOf(config);
  }

  async list(actor: Actor): Promise<PasskeyView[]> {
    return (await this.passkeys.findForUser(accountOf(actor))).map(toView);
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
        // A reset, or signing out everywhere else, that ended this session while the passkey
        // was checked holds the same lock: what they end adds nothing after them.
        if (await this.sessions.hasEnded(m, actor, this.clock.now())) {
          throw new SignInRequiredError();
        }
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
        this.audit.recordIn(m, actor, {
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
      this.audit.recordIn(m, actor, {
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
      this.audit.recordIn(manager, actor, {
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
}
