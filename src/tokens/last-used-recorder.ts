import { Injectable, Logger } from '@nestjs/common';
import { Transactions } from '../database/transactions.js';
import { TokensRepository } from './tokens.repository.js';
import { Scheduler } from '../scheduler/scheduler.js';

const INTERVAL_MS = 60_000;
const MAX_TRACKED = 100_000;

/**
 * Records when a token was last used, at most once a minute per token and off the request
 * path: the write is started after the response is decided, never awaited by it, and its
 * failure is logged, not thrown. The in-process map only throttles writes; it is never read
 * to decide whether a token is valid.
 */
@Injectable()
export class LastUsedRecorder {
  private readonly logger = new Logger(LastUsedRecorder.name);
  private readonly lastWritten = new Map<number, number>();

  constructor(
    private readonly tokens: TokensRepository,
    private readonly transactions: Transactions,
    private readonly scheduler: Scheduler,
  ) {}

  record(tokenId: number, storedLastUsedAt: Date | null, now: number): void {
    if (storedLastUsedAt && now - storedLastUsedAt.getTime() < INTERVAL_MS) return;
    const written = this.lastWritten.get(tokenId);
    if (written !== undefined && now - written < INTERVAL_MS) return;
    if (this.lastWritten.size >= MAX_TRACKED) this.lastWritten.clear();
    this.lastWritten.set(tokenId, now);
    this.scheduler.after(`last use of token ${tokenId} at ${now}`, 0, () =>
      this.transactions
        .runStatement((m) =>
          this.tokens.touchLastUsed(m, tokenId, new Date(now), new Date(now - INTERVAL_MS)),
        )
        .catch((error: unknown) => {
          this.lastWritten.delete(tokenId);
          this.logger.warn(`Could not record last use of token ${tokenId}: ${String(error)}`);
        }),
    );
  }
}
