import { Inject, Injectable } from '@nestjs/common';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/server';
import { AuditLog } from '../audit/audit-log.js';
import { Clock } from '../clock/clock.js';
import { clientOf, type Actor } from '../common/actor.js';
import type { Config } from '../config/config.js';
import { CONFIG } from '../config/config.module.js';
import { Transactions } from '../database/transactions.js';
import { SignInLimiter } from '../rate-limit/sign-in-limiter.js';
import type { ChallengePurpose } from './passkey-challenge.entity.js';
import { CHALLENGE_MS, PasskeyChallenges } from './passkey-challenges.js';
import { parseCredential, transportsOf, webauthn } from './passkey-credentials.js';
import type { Passkey } from './passkey.entity.js';
import { PasskeyRefusedError } from './passkeys.errors.js';
import { PasskeysRepository } from './passkeys.repository.js';
import { relyingPartyOf, type RelyingParty } from './relying-party.js';

/**
 * Checking a passkey: to sign in (both factors at once), as the second factor, or to confirm a
 * sensitive action. Every challenge is used once, by the session it was handed to, within five
 * minutes; every check counts against the client's sign-in attempts. Adding and removing
 * passkeys is PasskeysService's.
 */
@Injectable()
export class PasskeyAuthenticationService {
  private readonly rp: RelyingParty;

  constructor(
    private readonly passkeys: PasskeysRepository,
    private readonly challenges: PasskeyChallenges,
    private readonly transactions: Transactions,
    private readonly audit: AuditLog,
    private readonly limiter: SignInLimiter,
    private readonly clock: Clock,
    @Inject(CONFIG) config: Config,
  ) {
    this.rp = relyingPartyOf(config);
  }

  /** Whether the person has a passkey (the challenge page offers one then). */
  async has(userId: number): Promise<boolean> {
    return (await this.passkeys.findForUser(userId)).length > 0;
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
