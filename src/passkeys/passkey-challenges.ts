import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { Clock } from '../clock/clock.js';
import { isDeadlock } from '../common/errors/database-errors.js';
import { Transactions } from '../database/transactions.js';
import { Scheduler } from '../scheduler/scheduler.js';
import type { ChallengePurpose } from './passkey-challenge.entity.js';
import { PasskeyRefusedError } from './passkeys.errors.js';
import { PasskeysRepository } from './passkeys.repository.js';

/** How long a challenge may be answered. */
export const CHALLENGE_MS = 5 * 60_000;

/** How often challenges past their time are deleted. */
export const CHALLENGE_PRUNE_MS = 5 * 60_000;

/**
 * The challenges handed out for passkey ceremonies: one live per session and purpose, taken
 * once, within five minutes. Those nobody answered are deleted by the scheduler, never by a
 * request: a request that deleted every expired challenge in its transaction held locks across
 * the expiry index, and a burst of sign-in challenges deadlocked on them.
 */
@Injectable()
export class PasskeyChallenges implements OnModuleInit {
  private readonly logger = new Logger('Passkeys');

  constructor(
    private readonly passkeys: PasskeysRepository,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly scheduler: Scheduler,
  ) {}

  onModuleInit(): void {
    this.scheduler.every('expired passkey challenges', CHALLENGE_PRUNE_MS, () => this.prune());
  }

  /**
   * Hands `challenge` to the session for `purpose` (and person), in place of the session's
   * earlier one. Two statements, each committed alone: in one transaction the DELETE's gap lock
   * (taken even when it deletes nothing) and the INSERT's wait for the same gap made requests of
   * different sessions deadlock under InnoDB.
   */
  async save(
    challenge: string,
    sessionHandle: string,
    purpose: ChallengePurpose,
    userId: number | null,
  ): Promise<void> {
    const expiresAt = new Date(this.clock.nowMs() + CHALLENGE_MS);
    await this.transactions.run((m) => this.passkeys.dropChallenge(m, sessionHandle, purpose));
    await this.transactions.run((m) =>
      this.passkeys.insertChallenge(m, { challenge, sessionHandle, purpose, userId }, expiresAt),
    );
  }

  /** Takes the challenge, or refuses: used already, expired, another session's or purpose's. */
  async take(
    challenge: string,
    sessionHandle: string,
    purpose: ChallengePurpose,
    userId: number | null,
  ): Promise<void> {
    const taken = await this.transactions.runStatement((m) =>
      this.passkeys.takeChallenge(
        m,
        { challenge, sessionHandle, purpose, userId },
        this.clock.now(),
      ),
    );
    if (!taken) throw new PasskeyRefusedError();
  }

  /**
   * Deletes the challenges past their time; how many. A deadlock with the requests handing out
   * challenges is harmless: what is left goes at the next round.
   */
  async prune(): Promise<number> {
    try {
      const now = this.clock.now();
      return await this.transactions.runStatement((m) =>
        this.passkeys.deleteExpiredChallenges(m, now),
      );
    } catch (error) {
      if (isDeadlock(error)) {
        this.logger.debug('Expired passkey challenges: deadlocked, left for the next round');
      } else {
        this.logger.warn(`Could not prune expired passkey challenges: ${String(error)}`);
      }
      return 0;
    }
  }
}
