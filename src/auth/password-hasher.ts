import { Injectable } from '@nestjs/common';
import argon2 from 'argon2';
import { DomainError } from '../common/errors/domain.error.js';

/** argon2id at OWASP's first recommended setting (m=19 MiB, t=2, p=1) or above. */
const OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/** Too many passwords are being hashed already; the client may try again in a moment. */
export class HashingBusyError extends DomainError {
  readonly code = 'server_busy';
  override readonly retryAfterSeconds = 1;
  constructor() {
    super('The server is busy. Try again in a moment.');
  }
}

/**
 * At most `running` tasks at once and `waiting` more in line; past that a task is refused at
 * once rather than queued without end.
 */
export class Lane {
  private active = 0;
  private readonly queue: (() => void)[] = [];

  constructor(
    private readonly running: number,
    private readonly waiting: number,
  ) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.running) {
      if (this.queue.length >= this.waiting) throw new HashingBusyError();
      await new Promise<void>((resolve) => this.queue.push(resolve));
    } else {
      this.active++;
    }
    try {
      return await task();
    } finally {
      // Hand the slot straight to the next in line, or give it back.
      const next = this.queue.shift();
      if (next) next();
      else this.active--;
    }
  }
}

/**
 * Each argon2 hash takes 19 MiB and a libuv thread for tens of milliseconds. New hashes
 * (registration, password changes) and checks (sign-in) run in lanes of their own: a flood of
 * registrations waits or is refused in its own lane and never takes the threads sign-in needs,
 * and at most three hashes hold memory at once, leaving the fourth libuv thread to the rest.
 */
@Injectable()
export class PasswordHasher {
  private readonly hashing = new Lane(1, 16);
  private readonly verifying = new Lane(2, 64);

  hash(password: string): Promise<string> {
    return this.hashing.run(() => argon2.hash(password, OPTIONS));
  }

  verify(hash: string, password: string): Promise<boolean> {
    return this.verifying.run(async () => {
      try {
        return await argon2.verify(hash, password);
      } catch {
        return false;
      }
    });
  }
}
