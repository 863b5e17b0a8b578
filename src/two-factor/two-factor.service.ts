import type { EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log.js';
import { Injectable, Logger } from '@nestjs/common';
import { accountOf, type Actor, knownOf } from '../common/actor.js';
import { ValidationError } from '../common/errors/domain.error.js';
import { Clock } from '../clock/clock.js';
import { isUniqueViolation } from '../common/errors/database-errors.js';
import { Transactions } from '../database/transactions.js';
import { EmailVerificationService } from '../email-verification/email-verification.service.js';
import { SecurityNotices } from '../security-notices/security-notices.js';
import {
  hashRecoveryCode,
  newRecoveryCode,
  normalizeRecoveryCode,
  RECOVERY_CODE_COUNT,
} from './recovery-codes.js';
import { SecretCipher, UnreadableSecretError } from './secret-cipher.js';
import { TotpCodes, type TotpCheck } from './totp.js';
import { TwoFactorLimiter } from './two-factor-limiter.js';
import {
  RecoveryCodesChangedError,
  TwoFactorAlreadyEnabledError,
  TwoFactorNotEnabledError,
  TwoFactorSetupExpiredError,
} from './two-factor.errors.js';
import { TwoFactorRepository } from './two-factor.repository.js';

export interface TwoFactorStatus {
  enabled: boolean;
  enabledAt: Date | null;
  recoveryCodesLeft: number;
  /** Which set of recovery codes the person has (see regenerateRecoveryCodes); 0 for none. */
  recoveryCodesVersion: number;
  /** Off, and cannot be turned on until the person confirms their address. */
  addressToConfirm: boolean;
}

/** What the person typed at the challenge: a code from the app, or a recovery code. */
export interface SecondFactor {
  code?: string;
  recoveryCode?: string;
}

export interface SecondFactorAccepted {
  method: 'totp' | 'recovery_code';
  /** Unused recovery codes left, after a recovery code was used. */
  recoveryCodesLeft?: number;
}

const MESSAGES: Record<Exclude<TotpCheck, { ok: true }>['reason'], string> = {
  malformed: 'Enter the 6-digit code from your authenticator app.',
  wrong:
    'That code is not right. Type the code the app shows now; if codes keep failing, check that the clock of the device is set automatically.',
  reused: 'That code has been used already. Wait for the next one in your app.',
};
const BAD_RECOVERY_CODE = 'That recovery code is not valid, or it has been used.';
const UNREADABLE =
  'Your authenticator cannot be checked on this server at the moment. Use a recovery code.';

/** The ciphertexts' contexts: a secret opens only for the person, and where it was sealed. */
const setupContext = (userId: number) => `two-factor setup:${userId}`;
const credentialContext = (userId: number) => `two-factor:${userId}`;

/**
 * Two-factor sign-in with an authenticator app (TOTP) and single-use recovery codes: setting it
 * up, checking a second factor at sign-in, new recovery codes, turning it off.
 */
const TURNING_ON = 'turning on two-factor sign-in';

@Injectable()
export class TwoFactorService {
  private readonly logger = new Logger('TwoFactor');

  constructor(
    private readonly audit: AuditLog,
    private readonly repository: TwoFactorRepository,
    private readonly transactions: Transactions,
    private readonly totp: TotpCodes,
    private readonly cipher: SecretCipher,
    private readonly limiter: TwoFactorLimiter,
    private readonly verification: EmailVerificationService,
    private readonly notices: SecurityNotices,
    private readonly clock: Clock,
  ) {}

  async status(actor: Actor): Promise<TwoFactorStatus> {
    const credential = await this.repository.findCredential(accountOf(actor));
    const addressToConfirm = !credential && (await this.verification.isPendingFor(actor));
    const codes = credential
      ? await this.repository.recoveryCodesOf(accountOf(actor))
      : { left: 0, version: 0 };
    return {
      addressToConfirm,
      enabled: credential !== null,
      enabledAt: credential?.enabledAt ?? null,
      recoveryCodesLeft: codes.left,
      recoveryCodesVersion: codes.version,
    };
  }

  isEnabled(actor: Actor): Promise<boolean> {
    return this.repository.hasCredential(accountOf(actor));
  }

  /**
   * A new secret for the person to scan, sealed (encrypted) for keeping in their session until
   * a code from it confirms it; nothing is stored in the database yet. Refused while the
   * address is unconfirmed (with EMAIL_VERIFICATION=required): someone who signed up with
   * another person's address could otherwise lock its owner out of a reset.
   */
  async beginSetup(actor: Actor): Promise<string> {
    await this.verification.assertConfirmed(actor, TURNING_ON);
    if (await this.isEnabled(actor)) throw new TwoFactorAlreadyEnabledError();
    return this.cipher.encrypt(this.totp.newSecret(), setupContext(accountOf(actor)));
  }

  /** The secret of a setup under way, in base32, and the address the QR code holds. */
  describeSetup(
    actor: Actor,
    sealed: string,
    accountName: string,
  ): { secret: string; uri: string } {
    const secret = this.openSetup(actor, sealed);
    return { secret, uri: this.totp.uri(secret, accountName) };
  }

  /**
   * Turns two-factor sign-in on when `code` comes from the setup's secret, and returns the new
   * recovery codes: the only time they exist outside their hashes.
   */
  async confirm(actor: Actor, sealed: string, code: string): Promise<string[]> {
    await this.verification.assertConfirmed(actor, TURNING_ON);
    const secret = this.openSetup(actor, sealed);
    const check = this.totp.check(secret, code, null, this.clock.nowMs());
    if (!check.ok) throw new ValidationError({ code: MESSAGES[check.reason] });
    const codes = newRecoveryCodes();
    try {
      await this.transactions.run(async (m) => {
        if (await this.repository.hasCredential(accountOf(actor), m)) {
          throw new TwoFactorAlreadyEnabledError();
        }
        await this.repository.insertCredential(m, {
          userId: accountOf(actor),
          secret: this.cipher.encrypt(secret, credentialContext(accountOf(actor))),
          lastUsedStep: check.step,
        });
        await this.repository.replaceRecoveryCodes(m, accountOf(actor), codes.map(hashOf));
        await this.notices.send(m, accountOf(actor), 'two-factor-enabled');
        this.audit.recordIn(m, actor, { event: 'account.two_factor_enabled' });
      });
    } catch (error) {
      // Two confirmations at once: the primary key lets one in.
      if (isUniqueViolation(error)) throw new TwoFactorAlreadyEnabledError();
      throw error;
    }
    // What the request knows of the person follows: the page drawn next has it on.
    const known = knownOf(actor);
    if (known) known.twoFactor = true;
    return codes;
  }

  /**
   * New recovery codes, in place of all the earlier ones. `version` (the status's, as the page
   * showed it) makes a click act once: when the codes are no longer that set, because another
   * request made new ones first, nothing changes and it says so, so that no set is shown that
   * never worked. Decided with the authenticator's row locked.
   */
  async regenerateRecoveryCodes(actor: Actor, version?: number): Promise<string[]> {
    const codes = newRecoveryCodes();
    await this.transactions.run(async (m) => {
      if (!(await this.repository.lockCredential(m, accountOf(actor)))) {
        throw new TwoFactorNotEnabledError();
      }
      if (
        version !== undefined &&
        (await this.repository.recoveryCodesOf(accountOf(actor), m)).version !== version
      ) {
        throw new RecoveryCodesChangedError();
      }
      await this.repository.replaceRecoveryCodes(m, accountOf(actor), codes.map(hashOf));
      this.audit.recordIn(m, actor, {
        event: 'account.recovery_codes_regenerated',
      });
    });
    return codes;
  }

  async disable(actor: Actor): Promise<void> {
    await this.transactions.run(async (m) => {
      if (!(await this.repository.deleteAll(m, accountOf(actor))))
        throw new TwoFactorNotEnabledError();
      await this.notices.send(m, accountOf(actor), 'two-factor-disabled');
      this.audit.recordIn(m, actor, { event: 'account.two_factor_disabled' });
    });
  }

  /**
   * Removes the person's two-factor sign-in (the app's secret and the recovery codes) in
   * `manager`'s transaction, for an operator's reset: in their security log with `because`, and
   * no mail of its own (the reset sends one for all it removed). Returns whether there was one.
   */
  async removeAll(manager: EntityManager, actor: Actor, because: string): Promise<boolean> {
    const removed = await this.repository.deleteAll(manager, accountOf(actor));
    if (removed) {
      this.audit.recordIn(manager, actor, {
        event: 'account.two_factor_disabled',
        detail: { because },
      });
    }
    return removed;
  }

  /**
   * The second step of signing in: a code from the app or an unused recovery code, which is
   * then used up. `attempt` names this pending sign-in for the limit on wrong codes.
   */
  async verifySignIn(
    actor: Actor,
    attempt: string,
    input: SecondFactor,
  ): Promise<SecondFactorAccepted> {
    const now = this.clock.nowMs();
    const recoveryCode = input.recoveryCode?.trim();
    const code = input.code?.trim();
    if (!recoveryCode && !code) {
      throw new ValidationError({
        code: 'Enter the 6-digit code from your authenticator app, or use a recovery code.',
      });
    }
    // Counted before it is checked, so codes sent at the same moment cannot all be tried.
    const reserved = await this.limiter.reserve(accountOf(actor), attempt);
    let refusal: Record<string, string> | null;
    try {
      const credential = await this.repository.findCredential(accountOf(actor));
      if (!credential) {
        // Turned off since the password was typed: the password is all that is asked now.
        await reserved.giveBack();
        return { method: 'totp' };
      }
      refusal = recoveryCode
        ? await this.useRecoveryCode(actor, recoveryCode, now)
        : await this.useTotp(actor, credential.secret, credential.lastUsedStep, code!, now);
    } catch (error) {
      // Not a guess that was checked (an unreadable secret, a database failure): not counted.
      await reserved.giveBack();
      throw error;
    }
    // A wrong code stays counted; a right one is given back.
    if (refusal) throw new ValidationError(refusal);
    await reserved.giveBack();
    if (!recoveryCode) return { method: 'totp' };
    const left = await this.repository.countUnusedRecoveryCodes(accountOf(actor));
    return { method: 'recovery_code', recoveryCodesLeft: left };
  }

  /** Null when the code is accepted (and its step recorded), else the field's message. */
  private async useTotp(
    actor: Actor,
    sealed: string,
    lastUsedStep: number | null,
    code: string,
    now: number,
  ): Promise<Record<string, string> | null> {
    let secret: string;
    try {
      secret = this.cipher.decrypt(sealed, credentialContext(accountOf(actor)));
    } catch (error) {
      if (!(error instanceof UnreadableSecretError)) throw error;
      // Not the person's doing, and not a guess: said plainly, and not counted.
      this.logger.warn(`The two-factor secret of user ${accountOf(actor)} cannot be decrypted`);
      throw new ValidationError({ code: UNREADABLE });
    }
    const check = this.totp.check(secret, code, lastUsedStep, now);
    if (!check.ok) return { code: MESSAGES[check.reason] };
    const advanced = await this.transactions.runStatement((m) =>
      this.repository.advanceStep(m, accountOf(actor), check.step),
    );
    return advanced ? null : { code: MESSAGES.reused };
  }

  private async useRecoveryCode(
    actor: Actor,
    typed: string,
    now: number,
  ): Promise<Record<string, string> | null> {
    const normalized = normalizeRecoveryCode(typed);
    if (!normalized) return { recovery_code: BAD_RECOVERY_CODE };
    const used = await this.transactions.runStatement((m) =>
      this.repository.consumeRecoveryCode(
        m,
        accountOf(actor),
        hashRecoveryCode(normalized),
        new Date(now),
      ),
    );
    return used ? null : { recovery_code: BAD_RECOVERY_CODE };
  }

  private openSetup(actor: Actor, sealed: string): string {
    try {
      return this.cipher.decrypt(sealed, setupContext(accountOf(actor)));
    } catch (error) {
      if (error instanceof UnreadableSecretError) throw new TwoFactorSetupExpiredError();
      throw error;
    }
  }
}

function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
}

function hashOf(code: string): string {
  return hashRecoveryCode(normalizeRecoveryCode(code)!);
}
