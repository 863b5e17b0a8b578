import { Injectable } from '@nestjs/common';
import type { MailComposer } from './mail-message.js';

/** The composer of each kind of message; features register theirs when they start. */
@Injectable()
export class MailComposers {
  private readonly composers = new Map<string, MailComposer>();

  register(kind: string, composer: MailComposer): void {
    if (this.composers.has(kind)) throw new Error(`A composer for "${kind}" mail exists already`);
    this.composers.set(kind, composer);
  }

  get(kind: string): MailComposer | undefined {
    return this.composers.get(kind);
  }
}
