import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import { Scheduler } from '../scheduler/scheduler.js';
import { ACCESS_LOGGER, ROOT_LOGGER } from './root-logger.js';
import { logRequest } from './request-log.js';
import type { ResponseWatcher } from './request-observer.js';

/** How often buffered access lines are written when traffic is too light to fill the buffer. */
export const ACCESS_LOG_FLUSH_MS = 1_000;

/**
 * The access log: one line per request, buffered (`createAccessLogger`) and flushed every second
 * by the scheduler and at shutdown; the lines of failed (5xx) and aborted requests go through the
 * root logger, written at once, like every other warning and error.
 */
@Injectable()
export class AccessLog implements OnApplicationShutdown {
  constructor(
    @Inject(ACCESS_LOGGER) private readonly access: Logger,
    @Inject(ROOT_LOGGER) private readonly root: Logger,
    scheduler: Scheduler,
  ) {
    if (access !== root) {
      scheduler.every('access log', ACCESS_LOG_FLUSH_MS, () => this.flush());
    }
  }

  /** The watcher `observeRequests` tells of every response. */
  watcher(): ResponseWatcher {
    return logRequest(this.access, this.root);
  }

  flush(): Promise<void> {
    return new Promise((resolve) => this.access.flush(() => resolve()));
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.access !== this.root) await this.flush();
  }
}
